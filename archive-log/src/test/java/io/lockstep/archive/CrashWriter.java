package io.lockstep.archive;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;

/**
 * The process that {@link CrashRecoveryTest} kills with SIGKILL. It opens (and so recovers) the log, checks that
 * frame i holds {@code payload(seed, i)} for every frame present, then appends the following frames in batches of
 * random size, printing {@code durable <position> <frames>} after each flush returns. Those lines are the promises the
 * test holds recovery to.
 */
public final class CrashWriter
{
    private CrashWriter()
    {
    }

    public static void main(final String[] args)
    {
        final Path dir = Path.of(args[0]);
        final long seed = Long.parseLong(args[1]);
        final DurabilityPolicy durability = DurabilityPolicy.valueOf(args[2]);
        final ArchiveLogConfig config = CrashRecoveryTest.config(dir).durability(durability);
        try (ArchiveLog log = ArchiveLog.open(config))
        {
            final long[] count = { 0 };
            try (LogReader reader = log.newReader(log.startPosition()))
            {
                while (reader.poll((buffer, offset, length, position, term, type) ->
                {
                    if (!Arrays.equals(TestFrames.bytes(buffer, offset, length),
                        CrashRecoveryTest.payload(seed, count[0])))
                    {
                        throw new IllegalStateException("frame " + count[0] + " at " + position + " differs");
                    }
                    count[0]++;
                }, Long.MAX_VALUE, 1000) > 0)
                {
                }
            }
            System.out.println("ready " + log.appendedPosition() + " " + count[0]);
            System.out.flush();

            final Random random = new Random(seed ^ count[0]);
            long index = count[0];
            while (true)
            {
                final int batch = 1 + random.nextInt(64);
                for (int i = 0; i < batch; i++)
                {
                    final byte[] payload = CrashRecoveryTest.payload(seed, index);
                    TestFrames.append(log, 1, 1, payload);
                    index++;
                }
                final long durable = log.flush();
                System.out.println("durable " + durable + " " + index);
                System.out.flush();
            }
        }
    }
}
