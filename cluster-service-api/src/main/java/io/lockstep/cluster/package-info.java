/**
 * The API users program against: {@code ClusteredService}, the {@code Cluster} it is handed, client sessions
 * and the cluster client. Filled in by the services-and-clients work.
 */
package io.lockstep.cluster;
