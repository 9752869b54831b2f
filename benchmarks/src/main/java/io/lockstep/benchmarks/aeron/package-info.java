/**
 * The same workloads against Aeron Cluster 1.46.7, for side-by-side figures; run on a classpath of its own, since
 * aeron-all bundles an older Agrona.
 */
package io.lockstep.benchmarks.aeron;
