// Curator's own InterProcessMutex (Debian's libcurator-recipes-java, Curator
// 5.4) when its holder is cut off past the session timeout.
//
// Role `hold`: take `new InterProcessMutex(client, PATH)`, print
// ACQUIRED, then every 100 ms print what the mutex believes
// (`BELIEF true|false`: its `isAcquiredInThisProcess()`). Role `take`: take
// the same lock, print ACQUIRED, hold it for a second, release it, print
// RELEASED. Both print every connection state Curator reports to its
// listeners once it is connected (`STATE SUSPENDED|LOST|RECONNECTED|READ_ONLY`). The
// program only reports: it does not act on SUSPENDED or LOST.
//
// Every line starts with the wall time (seconds since the epoch), so the
// processes' lines and the validator's own events share one clock. The
// validator cuts the holder off — stops its process (SIGSTOP) or freezes the
// proxy it connects through — until the other client holds the lock.
//
// Role `again` (an ensemble's CURATOR-604 run): take the lock, print
// ACQUIRED, hold it until a line comes on stdin (the validator's word),
// release it, print RELEASED, take it again, print ACQUIRED, then report
// its belief as `hold` does.
//
// With a fifth argument `ordered`, every ZooKeeper handle the client makes
// takes the connect string's servers in the order given, not shuffled, and
// a new handle (after LOST) starts at the server the last one tried last: so
// the validator knows where the client connects first and where it goes
// next — one of the orders a real client's shuffle can draw, the one the
// model's client takes (the next server round).
//
// usage: java -cp CLASSPATH CuratorPause.java CONNECT hold|take|again SESSION_TIMEOUT_S PATH [ordered]

import java.net.InetSocketAddress;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryForever;
import org.apache.curator.utils.ZookeeperFactory;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ConnectStringParser;
import org.apache.zookeeper.client.HostProvider;
import org.apache.zookeeper.client.ZKClientConfig;

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
        boolean ordered = args.length > 4 && args[4].equals("ordered");
        CuratorFramework client = connect(connect, timeoutMs, ordered);
        client.getConnectionStateListenable().addListener((c, state) -> say("STATE " + state));
        InterProcessMutex mutex = new InterProcessMutex(client, path);
        mutex.acquire();
        say("ACQUIRED");
        if (role.equals("again")) {
            new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
            mutex.release();
            say("RELEASED");
            mutex.acquire();
            say("ACQUIRED");
        }
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

    static CuratorFramework connect(String connect, int timeoutMs, boolean ordered) throws Exception {
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder();
        if (ordered) {
            builder.zookeeperFactory(new OrderedFactory());
        }
        CuratorFramework client = builder
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

    /** ZooKeeper handles whose servers come in the connect string's order. */
    static final class OrderedFactory implements ZookeeperFactory {
        @Override
        public ZooKeeper newZooKeeper(String connect, int timeout, Watcher watcher, boolean readOnly)
                throws Exception {
            return new ZooKeeper(connect, timeout, watcher, readOnly, new OrderedHosts(connect));
        }

        @Override
        public ZooKeeper newZooKeeper(
                String connect, int timeout, Watcher watcher, boolean readOnly, ZKClientConfig config)
                throws Exception {
            if (config == null) {
                return newZooKeeper(connect, timeout, watcher, readOnly);
            }
            return new ZooKeeper(connect, timeout, watcher, readOnly, new OrderedHosts(connect), config);
        }
    }

    /**
     * The servers in order, round; a new one starts at the server the last
     * one tried last (ZooKeeper's StaticHostProvider shuffles them).
     */
    static final class OrderedHosts implements HostProvider {
        private static int lastTried = 0;
        private final List<InetSocketAddress> hosts;
        private int cursor;

        OrderedHosts(String connect) {
            hosts = new ConnectStringParser(connect).getServerAddresses();
            synchronized (OrderedHosts.class) {
                cursor = lastTried;
            }
        }

        @Override
        public int size() {
            return hosts.size();
        }

        @Override
        public synchronized InetSocketAddress next(long spinDelay) {
            int i = cursor % hosts.size();
            cursor++;
            synchronized (OrderedHosts.class) {
                lastTried = i;
            }
            InetSocketAddress a = hosts.get(i);
            return new InetSocketAddress(a.getHostString(), a.getPort());
        }

        @Override
        public void onConnected() {}

        @Override
        public boolean updateServerList(Collection<InetSocketAddress> servers, InetSocketAddress current) {
            return false;
        }
    }
}
