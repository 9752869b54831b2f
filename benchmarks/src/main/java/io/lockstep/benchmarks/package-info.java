/**
 * Programs that print figures (never timed unit tests): open-loop latency into HdrHistogram corrected for coordinated
 * omission, failover outage, allocation per message, the log's append rate, snapshot pause and restart times.
 */
package io.lockstep.benchmarks;
