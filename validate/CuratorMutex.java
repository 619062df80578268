// Curator's own InterProcessMutex (Debian's libcurator-recipes-java, Curator
// 5.4) in the baseline herd scenario, measured.
//
// N clients, each its own CuratorFramework (its own session), take
// `new InterProcessMutex(client, "/lock")` at once, hold it for HOLD_MS,
// release it. Requests are counted where Curator traces each ZooKeeper
// operation (`AdvancedTracerDriver`: one OperationTrace per request), by
// kind and whether it set a watch, for paths under /lock. Prints one JSON
// object. The validator also counts every request and notification at the
// wire (it points HOST:PORT at its ZooKeeper proxy) and the server's
// watchers triggered (`mntr`, before and after).
//
// usage: java -cp CLASSPATH CuratorMutex.java HOST:PORT N HOLD_MS

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CyclicBarrier;
import org.apache.curator.drivers.AdvancedTracerDriver;
import org.apache.curator.drivers.EventTrace;
import org.apache.curator.drivers.OperationTrace;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;

public class CuratorMutex {
    static final Map<String, Integer> requests = new TreeMap<>();

    /// lockstep's request kinds, from Curator's operation names.
    static String kind(OperationTrace t) {
        String name = t.getName();
        String base;
        if (name.startsWith("CreateBuilderImpl")) base = "create";
        else if (name.startsWith("DeleteBuilderImpl")) base = "delete";
        else if (name.startsWith("GetChildrenBuilderImpl")) base = "get_children";
        else if (name.startsWith("GetDataBuilderImpl")) base = "get_data";
        else if (name.startsWith("ExistsBuilderImpl")) base = "exists";
        else base = name;
        return t.isWithWatcher() ? base + "_watch" : base;
    }

    public static void main(String[] args) throws Exception {
        String connect = args[0];
        int n = Integer.parseInt(args[1]);
        long holdMs = Long.parseLong(args[2]);
        long start = System.nanoTime();
        List<CuratorFramework> clients = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            CuratorFramework c = CuratorFrameworkFactory.builder()
                    .connectString(connect)
                    .sessionTimeoutMs(10000)
                    .retryPolicy(new RetryOneTime(100))
                    .ensembleTracker(false)
                    .build();
            c.getZookeeperClient().setTracerDriver(new AdvancedTracerDriver() {
                @Override
                public void addTrace(OperationTrace t) {
                    String path = t.getPath();
                    if (path != null && (path.equals("/lock") || path.startsWith("/lock/"))) {
                        synchronized (requests) {
                            requests.merge(kind(t), 1, Integer::sum);
                        }
                    }
                }

                @Override
                public void addEvent(EventTrace e) {}
            });
            c.start();
            c.blockUntilConnected();
            clients.add(c);
        }
        CyclicBarrier go = new CyclicBarrier(n);
        List<Thread> threads = new ArrayList<>();
        for (CuratorFramework c : clients) {
            Thread t = new Thread(() -> {
                try {
                    InterProcessMutex m = new InterProcessMutex(c, "/lock");
                    go.await();
                    m.acquire();
                    Thread.sleep(holdMs);
                    m.release();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) t.join();
        Thread.sleep(300);
        for (CuratorFramework c : clients) c.close();
        StringBuilder json = new StringBuilder("{\"requests\": {");
        boolean first = true;
        for (Map.Entry<String, Integer> e : requests.entrySet()) {
            if (!first) json.append(", ");
            first = false;
            json.append('"').append(e.getKey()).append("\": ").append(e.getValue());
        }
        json.append("}, \"acquisitions\": ").append(n);
        json.append(", \"wall_seconds\": ").append((System.nanoTime() - start) / 1e9).append('}');
        System.out.println(json);
    }
}
