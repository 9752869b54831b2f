package io.lockstep.examples.matching;

/**
 * Buy or sell.
 */
public enum Side
{
    BUY,
    SELL
}
