/**
 * The persisted log of one member: segmented, append-only, addressed by byte position, every frame checksummed
 * ({@link ArchiveLog}); recovery on open that tells a torn last write from damage to frames it
 * promised ({@link LogRecovery}, {@link PromiseFile}); readers for any thread;
 * the recording log; the snapshot store; and {@code log describe|verify} for operators.
 * <p>
 * Owns: every byte it writes and the proof that it reads back what was written.
 * <p>
 * Never: knows about terms' meaning, leaders or commit (a term is a number in a frame header); deletes or rewrites
 * data it was not asked to, except cutting a torn tail or what follows damage, which it reports.
 */
package io.lockstep.archive;
