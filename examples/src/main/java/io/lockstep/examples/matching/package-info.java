/**
 * A matching engine: a limit order book per instrument with price-time priority, new, cancel and replace, and
 * execution reports to the owning session; snapshots of every resting order.
 */
package io.lockstep.examples.matching;
