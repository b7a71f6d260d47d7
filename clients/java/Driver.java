package kafkaharness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.InvalidOffsetException;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * One client of the queue workload under --txn through the official Java client: reads one op
 * per line as JSON on stdin and writes one reply per line as JSON on stdout (logs go to stderr).
 *
 * <p>The first line is the configuration (the producer's and the consumer's properties, the
 * topic, its partition count, assign or subscribe); the driver answers it with its versions.
 * Then: txn (a transaction, see Txn), abort (the transaction an error stopped), seek (rewind
 * after a transaction that did not commit), poll, assign and subscribe. It closes its clients
 * and exits at the end of stdin, so it never outlives the harness that started it.
 * workloads/java_client.py turns the replies into the history's completions.
 */
public final class Driver {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
  private static final Duration POLL = Duration.ofMillis(50);

  private final String topic;
  private final int partitions;
  private final boolean group;
  private final Duration close;
  private final KafkaProducer<String, String> producer;
  private final KafkaConsumer<String, String> consumer;
  private final Txn txn;
  private Set<Integer> assigned; // null until the first poll, assign or subscribe
  private List<Integer> movedIn = new ArrayList<>();
  private List<Integer> movedOut = new ArrayList<>();
  private String failure; // why this client serves no more ops, once it is so

  Driver(JsonNode config) {
    topic = config.get("topic").asText();
    partitions = config.get("partitions").asInt();
    group = config.get("group").asBoolean();
    close = Duration.ofMillis(config.get("close_ms").asLong());
    producer =
        new KafkaProducer<>(
            properties(config.get("producer")), new StringSerializer(), new StringSerializer());
    consumer =
        new KafkaConsumer<>(
            properties(config.get("consumer")), new StringDeserializer(), new StringDeserializer());
    txn = new Txn(producer, this, topic, config.get("operation_ms").asLong());
  }

  /** Serves stdin's ops until it ends; then closes the clients. */
  public static void main(String[] args) throws IOException {
    // The protocol owns stdout: anything else printing there would garble it.
    PrintStream protocol =
        new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    System.setOut(System.err);
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String first = in.readLine();
    if (first == null) {
      return;
    }
    Driver driver = new Driver(MAPPER.readTree(first));
    try {
      reply(protocol, versions());
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        reply(protocol, driver.serve(line));
      }
    } finally {
      long started = System.nanoTime();
      driver.shutdown();
      System.err.printf("closed in %d ms%n", (System.nanoTime() - started) / 1_000_000);
    }
    System.exit(0); // a client thread still alive must not hold the process
  }

  private static void reply(PrintStream protocol, ObjectNode body) throws IOException {
    protocol.println(MAPPER.writeValueAsString(body));
    protocol.flush();
  }

  /** Returns the ready line: the Java client's and the JVM's versions. */
  static ObjectNode versions() throws IOException {
    Properties kafka = new Properties();
    try (InputStream in = Driver.class.getResourceAsStream("/kafka/kafka-version.properties")) {
      if (in != null) {
        kafka.load(in);
      }
    }
    ObjectNode ready = JSON.objectNode();
    ready.put("ready", true);
    ready.put("kafka_clients", kafka.getProperty("version", "unknown"));
    ready.put("java", System.getProperty("java.version"));
    return ready;
  }

  /** Serves one op line; returns its reply, with `exception` when the op threw. */
  ObjectNode serve(String line) {
    ObjectNode reply;
    try {
      JsonNode op = MAPPER.readTree(line);
      reply = dispatch(op);
    } catch (IOException | RuntimeException err) {
      reply = JSON.objectNode().put("exception", describe(err));
    }
    if (failure != null) {
      reply.put("failure", failure);
    }
    return reply;
  }

  private ObjectNode dispatch(JsonNode op) {
    String f = op.path("f").asText();
    switch (f) {
      case "txn":
        ArrayNode asked = (ArrayNode) op.get("value");
        return txn.run(asked, op.path("abort").asBoolean(), op.path("crash").asBoolean());
      case "abort":
        return txn.abort();
      case "seek":
        return JSON.objectNode().set("value", seek(op.get("value")));
      case "poll":
        ObjectNode reply = JSON.objectNode();
        return reply.set("value", poll(reply));
      case "assign":
        return JSON.objectNode().set("value", assign(op.get("value")));
      case "subscribe":
        subscribe();
        return JSON.objectNode().set("value", JSON.arrayNode().add(topic));
      case "clock": // the wall clock this JVM reads, which a client clock fault moves
        return JSON.objectNode().put("value", System.currentTimeMillis());
      default:
        throw new IllegalArgumentException("no such op: " + f);
    }
  }

  /**
   * Polls once; returns the records by partition (as [offset, value]), adding the poll's
   * rebalances and errors to notes. A truncated log under the consumer fails the client.
   */
  ObjectNode poll(ObjectNode notes) {
    if (assigned == null) {
      startReading();
    }
    ObjectNode records = JSON.objectNode();
    try {
      for (ConsumerRecord<String, String> record : consumer.poll(POLL)) {
        ArrayNode read = JSON.arrayNode().add(record.offset()).add(value(record.value()));
        String partition = String.valueOf(record.partition());
        if (!records.has(partition)) {
          records.set(partition, JSON.arrayNode());
        }
        ((ArrayNode) records.get(partition)).add(read);
      }
    } catch (InvalidOffsetException err) { // with auto.offset.reset=none: not the log we read
      failure = "the log was truncated under the consumer: " + describe(err);
      notes.withArray("errors").add(describe(err));
    } catch (RuntimeException err) {
      notes.withArray("errors").add(describe(err));
    }
    noteMoves(notes);
    return records;
  }

  private static JsonNode value(String raw) {
    try {
      return JSON.numberNode(Long.parseLong(raw));
    } catch (NumberFormatException | NullPointerException err) { // not ours: the checker says so
      return JSON.textNode(raw == null ? "" : raw);
    }
  }

  private void noteMoves(ObjectNode notes) {
    if (movedIn.isEmpty() && movedOut.isEmpty()) {
      return;
    }
    ObjectNode moved = (ObjectNode) notes.get("rebalanced");
    if (moved == null) {
      moved = notes.putObject("rebalanced");
      moved.putArray("assigned");
      moved.putArray("revoked");
    }
    movedIn.forEach(((ArrayNode) moved.get("assigned"))::add);
    movedOut.forEach(((ArrayNode) moved.get("revoked"))::add);
    movedIn = new ArrayList<>();
    movedOut = new ArrayList<>();
  }

  private void startReading() {
    if (group) {
      subscribe();
      return;
    }
    Set<Integer> everything = new TreeSet<>();
    for (int p = 0; p < partitions; p++) {
      everything.add(p);
    }
    List<TopicPartition> all = topicPartitions(everything);
    consumer.assign(all);
    consumer.seekToBeginning(all);
    assigned = everything;
    movedIn.addAll(everything);
  }

  /** Reads exactly the partitions given: new ones from the beginning, kept ones on. */
  private ArrayNode assign(JsonNode value) {
    Set<Integer> wanted = new TreeSet<>();
    value.forEach(p -> wanted.add(p.asInt()));
    Set<Integer> fresh = new TreeSet<>(wanted);
    if (assigned != null) {
      fresh.removeAll(assigned);
    }
    consumer.assign(topicPartitions(wanted)); // kept partitions keep their positions
    if (!fresh.isEmpty()) { // given no partitions, seekToBeginning rewinds every one held
      consumer.seekToBeginning(topicPartitions(fresh));
    }
    assigned = wanted;
    ArrayNode out = JSON.arrayNode();
    wanted.forEach(out::add);
    return out;
  }

  private void subscribe() {
    consumer.subscribe(
        List.of(topic),
        new ConsumerRebalanceListener() {
          @Override
          public void onPartitionsAssigned(Collection<TopicPartition> parts) {
            parts.forEach(tp -> movedIn.add(tp.partition()));
          }

          @Override
          public void onPartitionsRevoked(Collection<TopicPartition> parts) {
            parts.forEach(tp -> movedOut.add(tp.partition()));
          }
        });
    assigned = new TreeSet<>();
  }

  /** Seeks back to the offsets given by partition; returns those held, and so sought. */
  private ObjectNode seek(JsonNode offsets) {
    Map<Integer, Long> sorted = new TreeMap<>();
    for (Map.Entry<String, JsonNode> e : offsets.properties()) {
      sorted.put(Integer.valueOf(e.getKey()), e.getValue().asLong());
    }
    ObjectNode rewound = JSON.objectNode();
    sorted.forEach(
        (partition, offset) -> {
          try {
            consumer.seek(new TopicPartition(topic, partition), offset);
            rewound.put(String.valueOf(partition), offset);
          } catch (IllegalStateException err) { // no longer held: its next reader decides
            System.err.println("not rewound: " + describe(err));
          }
        });
    return rewound;
  }

  /**
   * In a consumer group, returns the positions known now of the partitions held (none is
   * waited for, as librdkafka's position() waits for none); else nothing.
   */
  Map<TopicPartition, OffsetAndMetadata> positions() {
    Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
    if (!group || assigned == null) {
      return positions;
    }
    for (TopicPartition tp : consumer.assignment()) {
      try {
        positions.put(tp, new OffsetAndMetadata(consumer.position(tp, Duration.ZERO)));
      } catch (TimeoutException err) { // not known yet
        continue;
      }
    }
    return positions;
  }

  ConsumerGroupMetadata groupMetadata() {
    return consumer.groupMetadata();
  }

  private List<TopicPartition> topicPartitions(Set<Integer> parts) {
    List<TopicPartition> out = new ArrayList<>();
    parts.forEach(p -> out.add(new TopicPartition(topic, p)));
    return out;
  }

  /** Closes the producer (aborting an open transaction) and the consumer, each bounded. */
  private void shutdown() {
    try {
      producer.close(close);
    } finally {
      consumer.close(CloseOptions.timeout(close));
    }
  }

  private static Properties properties(JsonNode settings) {
    Properties props = new Properties();
    for (Map.Entry<String, JsonNode> e : settings.properties()) {
      props.setProperty(e.getKey(), e.getValue().asText());
    }
    return props;
  }

  /** Returns an error as its class's simple name and message, with its cause's. */
  static String describe(Throwable err) {
    String text = err.getClass().getSimpleName() + ": " + err.getMessage();
    Throwable cause = err.getCause();
    if (cause != null && cause != err) {
      text += " (caused by " + cause.getClass().getSimpleName() + ": " + cause.getMessage() + ")";
    }
    return text;
  }
}
