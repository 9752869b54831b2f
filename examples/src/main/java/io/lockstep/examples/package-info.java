/**
 * Example services: a matching engine, a key-value store and an echo service.
 */
package io.lockstep.examples;
