package io.lockstep.benchmarks;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.HdrHistogram.HistogramLogReader;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;

/**
 * Draws the latency percentile distributions of the saved histograms (the classic HdrHistogram plot: percentile on a
 * log "nines" axis, latency on a log axis) into one PNG: every {@code lockstep-latency-RATE.hdr} and
 * {@code aeron-latency-RATE.hdr} in a directory. {@code PercentilePlot DIR} writes {@code DIR/latency-percentiles.png}.
 */
public final class PercentilePlot
{
    private static final int WIDTH = 1100;
    private static final int HEIGHT = 700;
    private static final int LEFT = 90;
    private static final int RIGHT = 260;
    private static final int TOP = 50;
    private static final int BOTTOM = 70;
    private static final double MAX_NINES = 5;

    private PercentilePlot()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Path dir = Path.of(args.length > 0 ? args[0] : "target/bench");
        final List<Path> files = new ArrayList<>();
        try (var stream = Files.list(dir))
        {
            stream.filter(p -> p.getFileName().toString().matches("(lockstep|aeron)-latency-\\d+\\.hdr"))
                .sorted().forEach(files::add);
        }
        if (files.isEmpty())
        {
            System.out.println("no histograms in " + dir);
            return;
        }
        final BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        final Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, WIDTH, HEIGHT);

        double maxUs = 1;
        final List<Histogram> histograms = new ArrayList<>();
        for (final Path f : files)
        {
            final Histogram h = (Histogram)new HistogramLogReader(new File(f.toString())).nextIntervalHistogram();
            histograms.add(h);
            maxUs = Math.max(maxUs, h.getMaxValue() / 1000.0);
        }
        final double minLog = 1;
        final double maxLog = Math.ceil(Math.log10(maxUs));
        axes(g, minLog, maxLog);

        final Color[] lockstepColors = { new Color(0, 90, 200), new Color(0, 140, 255), new Color(90, 180, 255),
            new Color(0, 60, 140), new Color(120, 120, 255) };
        final Color[] aeronColors = { new Color(200, 60, 0), new Color(255, 120, 0), new Color(255, 170, 80),
            new Color(150, 30, 0), new Color(230, 90, 120) };
        int lockstep = 0;
        int aeron = 0;
        for (int i = 0; i < files.size(); i++)
        {
            final String name = files.get(i).getFileName().toString().replace(".hdr", "");
            final boolean isAeron = name.startsWith("aeron");
            final Color c = isAeron ? aeronColors[aeron++ % aeronColors.length] :
                lockstepColors[lockstep++ % lockstepColors.length];
            g.setColor(c);
            g.setStroke(new BasicStroke(isAeron ? 2f : 2.5f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND, 10,
                isAeron ? new float[]{ 6, 4 } : null, 0));
            int px = -1;
            int py = -1;
            for (final HistogramIterationValue v : histograms.get(i).percentiles(5))
            {
                final double p = v.getPercentileLevelIteratedTo() / 100.0;
                final double nines = p >= 1 ? MAX_NINES : Math.min(MAX_NINES, Math.log10(1 / (1 - p)));
                final double us = Math.max(10, v.getValueIteratedTo() / 1000.0);
                final int x = LEFT + (int)(nines / MAX_NINES * (WIDTH - LEFT - RIGHT));
                final int y = HEIGHT - BOTTOM -
                    (int)((Math.log10(us) - minLog) / (maxLog - minLog) * (HEIGHT - TOP - BOTTOM));
                if (px >= 0)
                {
                    g.drawLine(px, py, x, y);
                }
                px = x;
                py = y;
            }
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
            g.drawString(name.replace("-latency-", " ") + " msg/s", WIDTH - RIGHT + 20, TOP + 20 + i * 22);
        }
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        g.drawString("Round-trip latency by percentile (288-byte echo, 3 members on loopback, open loop, " +
            "coordinated omission corrected)", LEFT, 30);
        g.dispose();
        final Path png = dir.resolve("latency-percentiles.png");
        ImageIO.write(image, "png", png.toFile());
        System.out.println("percentile plot: " + png);
    }

    private static void axes(final Graphics2D g, final double minLog, final double maxLog)
    {
        g.setColor(Color.LIGHT_GRAY);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        final String[] percentiles = { "0%", "90%", "99%", "99.9%", "99.99%", "99.999%" };
        for (int n = 0; n <= MAX_NINES; n++)
        {
            final int x = LEFT + (int)(n / MAX_NINES * (WIDTH - LEFT - RIGHT));
            g.setColor(Color.LIGHT_GRAY);
            g.drawLine(x, TOP, x, HEIGHT - BOTTOM);
            g.setColor(Color.DARK_GRAY);
            g.drawString(percentiles[n], x - 15, HEIGHT - BOTTOM + 20);
        }
        for (double l = minLog; l <= maxLog; l++)
        {
            final int y = HEIGHT - BOTTOM - (int)((l - minLog) / (maxLog - minLog) * (HEIGHT - TOP - BOTTOM));
            g.setColor(Color.LIGHT_GRAY);
            g.drawLine(LEFT, y, WIDTH - RIGHT, y);
            g.setColor(Color.DARK_GRAY);
            final double us = Math.pow(10, l);
            g.drawString(us >= 1000 ? String.format(Locale.ROOT, "%.0f ms", us / 1000) :
                String.format(Locale.ROOT, "%.0f us", us), 20, y + 4);
        }
        g.setColor(Color.DARK_GRAY);
        g.drawString("percentile", (WIDTH - RIGHT) / 2, HEIGHT - 25);
    }
}
