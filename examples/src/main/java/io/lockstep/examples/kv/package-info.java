/**
 * A replicated key-value store (get, put, compare-and-set) that counts any operation applied twice, its client and
 * load generator recording every operation, and a linearizability checker for the recorded histories.
 */
package io.lockstep.examples.kv;
