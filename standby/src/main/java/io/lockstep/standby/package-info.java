/**
 * Warm standby: a non-voting member in another zone that keeps a persisted, replayed copy of the committed log
 * and can be promoted when the primary zone is lost.
 */
package io.lockstep.standby;
