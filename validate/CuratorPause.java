// Curator's own InterProcessMutex (Debian's libcurator-recipes-java, Curator
// 5.4) when its holder is cut off past the session timeout.
//
// Role `hold`: take `new InterProcessMutex(client, PATH)`, print
// ACQUIRED, then every 100 ms print what the mutex believes
// (`BELIEF true|false`: its `isAcquiredInThisProcess()`). Role `take`: take
// the same lock, print ACQUIRED, hold it for a second, release it, print
// RELEASED. Both print every connection state Curator reports to its
// listeners (`STATE SUSPENDED|LOST|RECONNECTED|CONNECTED|READ_ONLY`). The
// program only reports: it does not act on SUSPENDED or LOST.
//
// Every line starts with the wall time (seconds since the epoch), so the
// processes' lines and the validator's own events share one clock. The
// validator cuts the holder off — stops its process (SIGSTOP) or freezes the
// proxy it connects through — until the other client holds the lock.
//
// With a fifth argument, a server of a connect string that lists several
// (an ensemble's): the client connects again until its first connection is
// to that server (ZooKeeper's client shuffles the list), so that the
// validator knows which server holds it; it prints `SERVER HOST:PORT`.
// Its reconnections later go where ZooKeeper's client takes them.
//
// usage: java -cp CLASSPATH CuratorPause.java CONNECT hold|take SESSION_TIMEOUT_S PATH [SERVER]

import java.util.Locale;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryForever;

public class CuratorPause {
    static synchronized void say(String what) {
        System.out.println(String.format(Locale.ROOT, "%.6f %s", System.currentTimeMillis() / 1000.0, what));
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        String connect = args[0];
        String role = args[1];
        int timeoutMs = (int) (Double.parseDouble(args[2]) * 1000);
        String path = args[3];
        String server = args.length > 4 ? args[4] : null;
        CuratorFramework client = connect(connect, timeoutMs);
        for (int attempt = 1; server != null; attempt++) {
            String at = client.getZookeeperClient().getZooKeeper().toString();
            // ClientCnxn names it: "remoteserver:localhost/127.0.0.1:2181 ".
            String port = server.substring(server.lastIndexOf(':'));
            int named = at.indexOf("remoteserver:");
            String remote = named < 0 ? "" : at.substring(named).split(" ")[0];
            if (remote.endsWith(port)) {
                say("SERVER " + server);
                break;
            }
            if (attempt == 50) {
                throw new IllegalStateException("never connected to " + server + " first: " + at);
            }
            client.close();
            client = connect(connect, timeoutMs);
        }
        client.getConnectionStateListenable().addListener((c, state) -> say("STATE " + state));
        InterProcessMutex mutex = new InterProcessMutex(client, path);
        mutex.acquire();
        say("ACQUIRED");
        if (role.equals("take")) {
            Thread.sleep(1000);
            mutex.release();
            say("RELEASED");
            client.close();
            return;
        }
        while (true) {
            say("BELIEF " + mutex.isAcquiredInThisProcess());
            Thread.sleep(100);
        }
    }

    static CuratorFramework connect(String connect, int timeoutMs) throws Exception {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(timeoutMs)
                .connectionTimeoutMs(timeoutMs)
                .retryPolicy(new RetryForever(200))
                .ensembleTracker(false)
                .build();
        client.start();
        client.blockUntilConnected();
        return client;
    }
}
