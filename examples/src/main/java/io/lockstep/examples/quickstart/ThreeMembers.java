package io.lockstep.examples.quickstart;

import io.lockstep.cluster.transport.ClusterSecret;
import io.lockstep.consensus.node.ClusterNode;
import io.lockstep.consensus.node.NodeConfig;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Three members of a {@link TotalService} cluster started from code, in one JVM, on loopback ports 9101-9103, with
 * their data under the directory given: {@code ThreeMembers DIR}. For trying the API on one machine; in
 * production each member runs on a host of its own, the same way with its own id.
 */
public final class ThreeMembers
{
    private ThreeMembers()
    {
    }

    /**
     * @param directory where each member keeps its data (a directory per member).
     * @param secret    the member secret every member proves.
     * @param ports     the three members' ports on 127.0.0.1.
     * @return the three members, running.
     */
    public static List<ClusterNode> start(final Path directory, final ClusterSecret secret, final int... ports)
        throws NodeConfig.ConfigException
    {
        final List<ClusterNode> members = new ArrayList<>();
        try
        {
            for (int id = 0; id < 3; id++)
            {
                members.add(ClusterNode.builder()
                    .memberId(id)
                    .member(0, "127.0.0.1", ports[0])
                    .member(1, "127.0.0.1", ports[1])
                    .member(2, "127.0.0.1", ports[2])
                    .dataDir(directory.resolve("member-" + id))
                    .service(TotalService::new)
                    .secret(secret)
                    .start());
            }
        }
        catch (final NodeConfig.ConfigException | RuntimeException ex)
        {
            // Those that started would otherwise hold their ports and files.
            members.forEach(ClusterNode::close);
            throw ex;
        }
        return members;
    }

    public static void main(final String[] args) throws Exception
    {
        final ClusterSecret secret = ClusterSecret.of(
            "for-trying-it-out-never-in-production".getBytes(StandardCharsets.US_ASCII));
        final List<ClusterNode> members = start(Path.of(args[0]), secret, 9101, 9102, 9103);
        System.out.println("three members on 127.0.0.1:9101-9103; stop with Ctrl-C");
        Runtime.getRuntime().addShutdownHook(new Thread(() -> members.forEach(ClusterNode::close)));
        members.get(0).awaitTermination();
    }
}
