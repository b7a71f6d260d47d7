"""Docker control of the Kafka and ZooKeeper nodes: images, config, admin queries."""
