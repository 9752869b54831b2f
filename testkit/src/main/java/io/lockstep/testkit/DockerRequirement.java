package io.lockstep.testkit;

import org.junit.jupiter.api.Assumptions;
import org.testcontainers.DockerClientFactory;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Whether container tests may run: with a Docker engine, yes. Without one they are skipped, loudly (a JUnit
 * assumption), unless {@code LOCKSTEP_REQUIRE_DOCKER=1} (set by {@code bin/lockstep test} once it has started
 * Docker, and always in CI), in which case that is a failure: a broken Docker setup must never pass as green. Call
 * {@link #check()} from a {@code @BeforeAll} of every class that uses {@link ContainerCluster}.
 */
public final class DockerRequirement
{
    private DockerRequirement()
    {
    }

    /**
     * Skip the calling test class (or fail it, when Docker is required) if no Docker engine answers.
     */
    public static void check()
    {
        final String why = unavailableBecause();
        if (null != why)
        {
            checkRequired(why);
            Assumptions.abort("CONTAINER SUITE SKIPPED: no Docker engine (" + why + ")");
        }
    }

    /**
     * @return true if a Docker engine answers Testcontainers.
     */
    public static boolean available()
    {
        return null == unavailableBecause();
    }

    private static String unavailableBecause()
    {
        try
        {
            return DockerClientFactory.instance().isDockerAvailable() ? null :
                "Docker is not available to Testcontainers";
        }
        catch (final RuntimeException ex)
        {
            return ex.toString();
        }
    }

    private static void checkRequired(final String why)
    {
        if ("1".equals(System.getenv("LOCKSTEP_REQUIRE_DOCKER")))
        {
            fail("the container suite must run here (LOCKSTEP_REQUIRE_DOCKER=1) but " + why + ": check that " +
                "dockerd runs and that TESTCONTAINERS_RYUK_DISABLED=true and TESTCONTAINERS_HOST_OVERRIDE=localhost " +
                "are set");
        }
    }
}
