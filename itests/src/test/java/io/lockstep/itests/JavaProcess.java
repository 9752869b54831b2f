package io.lockstep.itests;

import io.lockstep.cluster.JvmOptions;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a main class of the project in its own JVM, with a bounded wait, and returns its exit code and output.
 */
final class JavaProcess
{
    record Result(int exitCode, String output)
    {
    }

    private JavaProcess()
    {
    }

    static Result run(final String mainClass, final String... args) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(JvmOptions.REQUIRED);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass));
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        if (!process.waitFor(60, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            throw new IllegalStateException(mainClass + " did not finish in 60 s");
        }
        return new Result(process.exitValue(), new String(process.getInputStream().readAllBytes(),
            StandardCharsets.UTF_8));
    }
}
