/**
 * Multi-process and container failover tests live under src/test and run with Failsafe ({@code *IT}).
 */
package io.lockstep.itests;
