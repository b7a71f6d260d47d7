package kafkaharness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApplicationRecoverableException;
import org.apache.kafka.common.errors.RetriableException;

/**
 * One transactional producer's transactions: runs init, begin, the body of send and poll
 * micro-ops, then commit or abort, and reports what it saw as facts (the stage an error
 * stopped, and whether the producer's transaction manager then held a fatal or an abortable
 * error). The outcome rules are not here: workloads/txn_client.py applies them to these facts,
 * for this client and for librdkafka's alike.
 */
final class Txn {
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  /** A send of the body that was not delivered: the transaction cannot commit. */
  static final class BodyError extends Exception {
    private static final long serialVersionUID = 1L;

    BodyError(String message) {
      super(message);
    }
  }

  private final KafkaProducer<String, String> producer;
  private final Driver reader;
  private final String topic;
  private final long operationMs;
  private final Object manager; // the producer's TransactionManager, or null if unreachable
  private boolean ready; // initTransactions has returned

  Txn(KafkaProducer<String, String> producer, Driver reader, String topic, long operationMs) {
    this.producer = producer;
    this.reader = reader;
    this.topic = topic;
    this.operationMs = operationMs;
    this.manager = transactionManager(producer);
  }

  /**
   * Runs one transaction of the micro-ops asked; stops after its body when crash is set (the
   * caller then kills this process), aborts it when chooseAbort is set, else commits it.
   * Returns the micro-ops as completed, the poll notes and what was seen.
   */
  ObjectNode run(ArrayNode asked, boolean chooseAbort, boolean crash) {
    ObjectNode reply = JSON.objectNode();
    ArrayNode done = asked.deepCopy();
    reply.set("done", done);
    String stage = "init";
    try {
      if (!ready) {
        producer.initTransactions();
        ready = true;
        System.err.printf("transactions initialised; transactions v2: %s%n", isV2());
      }
      stage = "begin";
      producer.beginTransaction();
      stage = "body";
      body(asked, done, reply);
      if (crash) {
        reply.put("crashed", true); // left open: whoever ends it must abort it
      } else if (chooseAbort) {
        stage = "abort";
        producer.abortTransaction();
        reply.put("aborted", true);
      } else {
        stage = "commit";
        producer.commitTransaction();
        reply.put("committed", true);
      }
    } catch (BodyError err) {
      reply.set("error", facts("body", err.getMessage(), null, true));
    } catch (RuntimeException err) {
      reply.set("error", facts(stage, Driver.describe(err), err, false));
    }
    return reply;
  }

  /** Aborts the transaction an error stopped. Returns whether it returned, or why not. */
  ObjectNode abort() {
    ObjectNode reply = JSON.objectNode();
    try {
      producer.abortTransaction();
      reply.put("aborted", true);
    } catch (RuntimeException err) {
      reply.put("abort_error", Driver.describe(err));
    }
    return reply;
  }

  /**
   * Produces the sends and serves the polls in order, sends the group's positions with the
   * transaction (consume-transform-produce), then waits for every send's acknowledgement,
   * filling [offset, value] into done. Throws BodyError when a send was not delivered.
   */
  private void body(ArrayNode asked, ArrayNode done, ObjectNode notes) throws BodyError {
    Map<Integer, Future<RecordMetadata>> sends = new HashMap<>();
    for (int place = 0; place < asked.size(); place++) {
      JsonNode mop = asked.get(place);
      if ("send".equals(mop.get(0).asText())) {
        ProducerRecord<String, String> record =
            new ProducerRecord<>(topic, mop.get(1).asInt(), null, mop.get(2).asText());
        sends.put(place, producer.send(record));
      } else {
        done.set(place, JSON.arrayNode().add("poll").add(reader.poll(notes)));
      }
    }
    Map<TopicPartition, OffsetAndMetadata> positions = reader.positions();
    if (!positions.isEmpty()) {
      producer.sendOffsetsToTransaction(positions, reader.groupMetadata());
    }
    awaitSends(asked, done, sends);
  }

  private void awaitSends(
      ArrayNode asked, ArrayNode done, Map<Integer, Future<RecordMetadata>> sends)
      throws BodyError {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(operationMs);
    int undelivered = 0;
    String failed = null;
    for (Map.Entry<Integer, Future<RecordMetadata>> send : sends.entrySet()) {
      JsonNode mop = asked.get(send.getKey());
      try {
        long left = Math.max(0, deadline - System.nanoTime());
        RecordMetadata meta = send.getValue().get(left, TimeUnit.NANOSECONDS);
        ArrayNode sent = JSON.arrayNode().add(meta.offset()).add(mop.get(2));
        done.set(send.getKey(), JSON.arrayNode().add("send").add(mop.get(1)).add(sent));
      } catch (java.util.concurrent.TimeoutException err) {
        undelivered++;
      } catch (ExecutionException err) {
        failed = failed == null ? Driver.describe(err.getCause()) : failed;
      } catch (InterruptedException err) {
        Thread.currentThread().interrupt();
        throw new BodyError("interrupted while waiting for the sends");
      }
    }
    if (failed != null) {
      throw new BodyError("delivery failed: " + failed);
    }
    if (undelivered > 0) {
      throw new BodyError(
          undelivered + " sends undelivered after " + (operationMs / 1000.0) + " s");
    }
  }

  /**
   * Returns one error's facts: its stage and text, and, as the transaction manager holds them
   * after it, whether the producer is fatally broken and whether the transaction must be aborted
   * (the classification librdkafka gives as fatal() and txn_requires_abort()).
   */
  private ObjectNode facts(String stage, String text, Throwable err, boolean body) {
    ObjectNode error = JSON.objectNode();
    error.put("stage", stage);
    error.put("text", text);
    boolean fenced = causedBy(err, ApplicationRecoverableException.class);
    error.put("fatal", fenced || managerSays("hasFatalError"));
    error.put("retriable", causedBy(err, RetriableException.class));
    error.put("requires_abort", body || managerSays("hasAbortableError"));
    return error;
  }

  private static boolean causedBy(Throwable err, Class<?> kind) {
    for (Throwable at = err; at != null; at = at.getCause()) {
      if (kind.isInstance(at)) {
        return true;
      }
    }
    return false;
  }

  // The producer keeps its transaction state to itself; this reads it by reflection, as pinned
  // to kafka-clients 4.4.0 (the driver says so on stderr if that ever stops working).
  private static Object transactionManager(KafkaProducer<String, String> producer) {
    try {
      Field field = KafkaProducer.class.getDeclaredField("transactionManager");
      field.setAccessible(true);
      return field.get(producer);
    } catch (ReflectiveOperationException | RuntimeException err) {
      System.err.println("cannot read the producer's transaction state: " + err);
      return null;
    }
  }

  private boolean managerSays(String question) {
    if (manager == null) {
      return false;
    }
    try {
      Method method = manager.getClass().getDeclaredMethod(question);
      method.setAccessible(true);
      return (Boolean) method.invoke(manager);
    } catch (ReflectiveOperationException | RuntimeException err) {
      System.err.println("cannot ask the transaction manager " + question + ": " + err);
      return false;
    }
  }

  private String isV2() {
    return manager == null ? "unknown" : String.valueOf(managerSays("isTransactionV2Enabled"));
  }
}
