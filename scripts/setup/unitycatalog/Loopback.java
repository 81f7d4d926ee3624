// Loopback starts the OSS Unity Catalog server on 127.0.0.1:PORT only. The
// server's own main also starts a URL transcoder on every interface, which
// the tests do not need.
import io.unitycatalog.server.UnityCatalogServer;

public class Loopback {
  public static void main(String[] args) {
    UnityCatalogServer.builder().port(Integer.parseInt(args[0])).build().start();
  }
}
