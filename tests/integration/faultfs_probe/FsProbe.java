import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Writes files under a directory the way Kafka writes its own, each case leaving some of
 * its writes synced and some not, for tests/integration/test_faultfs.py to cut the power
 * under and read back. The calls are Kafka's: FileChannel.write, force(true) (fsync) and
 * force(false) (fdatasync), truncate, MappedByteBuffer.force (msync), a checkpoint
 * written to a .tmp file, forced, moved into place and its directory forced.
 *
 * <p>Usage: java FsProbe DIR cases | java FsProbe DIR unsynced NAME TEXT
 */
public final class FsProbe {
  private FsProbe() {}

  public static void main(String[] args) throws IOException {
    Path dir = Path.of(args[0]);
    if (args[1].equals("cases")) {
      cases(dir);
    } else {
      write(dir.resolve(args[2]), args[3], false);
    }
  }

  private static ByteBuffer bytes(String text) {
    return ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII));
  }

  private static FileChannel open(Path file) throws IOException {
    return FileChannel.open(
        file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.READ);
  }

  /** Writes text as the whole of file (O_TRUNC), fsyncing it when sync. */
  private static void write(Path file, String text, boolean sync) throws IOException {
    try (FileChannel ch =
        FileChannel.open(
            file,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
      ch.write(bytes(text));
      if (sync) {
        ch.force(true);
      }
    }
  }

  private static void cases(Path dir) throws IOException {
    // A then fsync then B: A is kept, B is not.
    try (FileChannel log =
        FileChannel.open(dir.resolve("log"), StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
      log.write(bytes("A"));
      log.force(true);
      log.write(bytes("B"));
    }
    // fdatasync keeps what it covers; a write past it is lost.
    try (FileChannel seg = open(dir.resolve("seg"))) {
      seg.write(bytes("x".repeat(10000)));
      seg.force(false);
      seg.write(bytes("yy"), 20000);
    }
    // A truncation after the sync is lost, and so is an O_TRUNC rewrite.
    try (FileChannel idx = open(dir.resolve("trunc"))) {
      idx.write(bytes("0123456789"));
      idx.force(true);
      idx.truncate(3);
    }
    write(dir.resolve("otrunc"), "abc", true);
    write(dir.resolve("otrunc"), "z", false);
    // Kafka's index: a shared, writable mapping, synced by msync.
    try (RandomAccessFile raf = new RandomAccessFile(dir.resolve("00.index").toFile(), "rw")) {
      raf.setLength(8192);
      raf.getChannel().force(true);
      MappedByteBuffer map = raf.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, 8192);
      map.put(0, "synced".getBytes(StandardCharsets.US_ASCII));
      map.force();
      map.put(4096, "unsynced".getBytes(StandardCharsets.US_ASCII));
    }
    // Names reach the disk at once; data waits for its file's sync.
    Path topic = Files.createDirectory(dir.resolve("topic-0"));
    write(topic.resolve("cp.tmp"), "offsets 7", true);
    Files.move(topic.resolve("cp.tmp"), topic.resolve("cp"), StandardCopyOption.ATOMIC_MOVE);
    try (FileChannel d = FileChannel.open(topic, StandardOpenOption.READ)) {
      d.force(true);
    }
    write(topic.resolve("careless.tmp"), "offsets 9", false);
    Files.move(topic.resolve("careless.tmp"), topic.resolve("careless"));
    write(topic.resolve("new.log"), "data", false);
    write(dir.resolve("gone"), "x", true);
    Files.delete(dir.resolve("gone"));
  }
}
