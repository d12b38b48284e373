"""The event feed: the bus everything that happens is published on, the store, the listener and the forwarder."""
