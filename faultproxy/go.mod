module kafka-harness/faultproxy

go 1.22
