package io.lockstep.consensus.node;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Seeded damage to a member's config file (lines dropped, duplicated or swapped, values replaced by garbage,
 * characters flipped, binary noise, an empty file): loading it either works or fails with a
 * {@link NodeConfig.ConfigException} naming the file; never another exception. {@code -Dlockstep.configfuzz.seeds=N}
 * (default 2,000).
 */
class NodeConfigFuzzTest
{
    private static final int SEEDS = Integer.getInteger("lockstep.configfuzz.seeds", 2000);
    private static final String[] VALUES = {
        "", " ", "-1", "0", "1", "65536", "2147483648", "99999999999999999999", "abc", "1.5", "0x10", "none", "batch",
        "lan", "wan", "0=127.0.0.1:9101", "0=:", "=", ",,,", "0=127.0.0.1:70000", "x=y:z", "/nonvoting",
        "cluster.secret", "missing.file", "accept-all", "token-file", "java.lang.String", "no.such.Class", "\u0000",
        "\uFFFF", "${HOME}" };

    @TempDir
    Path dir;

    @Test
    void aDamagedConfigLoadsOrFailsWithAConfigError() throws Exception
    {
        Files.writeString(dir.resolve("cluster.secret"), "0123456789abcdef0123456789abcdef\n");
        Files.setPosixFilePermissions(dir.resolve("cluster.secret"),
            PosixFilePermissions.fromString("rw-------"));
        final List<String> valid = List.of(
            "lockstep.member.id=0",
            "lockstep.members=0=127.0.0.1:9101,1=127.0.0.1:9102,2=127.0.0.1:9103",
            // A path of fixed length, not the temporary directory's: the mutations pick byte positions in the file, so
            // a path whose length changes from run to run would make each seed a different config.
            "lockstep.data.dir=/var/tmp/lockstep-config-fuzz/data",
            "lockstep.timeouts=lan",
            "lockstep.durability=batch",
            "lockstep.log.segment.length=1048576",
            "lockstep.snapshot.interval.bytes=0",
            "lockstep.snapshot.keep=2",
            "lockstep.metrics.port=0",
            "lockstep.session.timeout.ms=10000",
            "lockstep.cluster.secret.file=cluster.secret",
            "lockstep.client.authenticator=accept-all");
        final Path file = dir.resolve("node.properties");
        int loaded = 0;
        int refused = 0;
        for (long seed = 1; seed <= SEEDS; seed++)
        {
            final Random random = new Random(seed);
            final byte[] content = mutate(new ArrayList<>(valid), random);
            Files.write(file, content);
            try
            {
                NodeConfig.load(file, new Properties());
                loaded++;
            }
            catch (final NodeConfig.ConfigException ex)
            {
                assertTrue(null != ex.getMessage() && !ex.getMessage().isBlank(), "seed " + seed);
                refused++;
            }
            catch (final RuntimeException ex)
            {
                throw new AssertionError("config fuzz seed " + seed + ": " + ex + "\n" +
                    new String(content, StandardCharsets.ISO_8859_1), ex);
            }
        }
        System.out.printf("config fuzz: %d seeds, %d loaded, %d refused with a config error%n", SEEDS, loaded, refused);
        assertTrue(refused > 0 && loaded > 0, "the mutations reach both outcomes");
    }

    private static byte[] mutate(final List<String> lines, final Random random)
    {
        final int count = 1 + random.nextInt(3);
        for (int n = 0; n < count && !lines.isEmpty(); n++)
        {
            final int i = random.nextInt(lines.size());
            switch (random.nextInt(7))
            {
                case 0 -> lines.remove(i);
                case 1 -> lines.add(lines.get(i));
                case 2 ->
                {
                    final String line = lines.get(i);
                    final int eq = Math.max(0, line.indexOf('='));
                    lines.set(i, line.substring(0, Math.min(line.length(), eq + 1)) +
                        VALUES[random.nextInt(VALUES.length)]);
                }
                case 3 ->
                {
                    final char[] chars = lines.get(i).toCharArray();
                    if (chars.length > 0)
                    {
                        chars[random.nextInt(chars.length)] = (char)(32 + random.nextInt(95));
                        lines.set(i, new String(chars));
                    }
                }
                case 4 -> lines.set(i, lines.get(random.nextInt(lines.size())));
                case 5 ->
                {
                    final byte[] noise = new byte[random.nextInt(64)];
                    random.nextBytes(noise);
                    lines.add(new String(noise, StandardCharsets.ISO_8859_1));
                }
                default -> lines.clear();
            }
        }
        return String.join("\n", lines).getBytes(StandardCharsets.ISO_8859_1);
    }

    @Test
    void mutationsAreSeeded()
    {
        assertTrue(Arrays.equals(mutate(new ArrayList<>(List.of("a=b", "c=d")), new Random(5)),
            mutate(new ArrayList<>(List.of("a=b", "c=d")), new Random(5))), "a seed replays its damage");
    }
}
