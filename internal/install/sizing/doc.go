// Package sizing derives the aws-cloud-controller-manager flags that bound
// how fast it initializes Nodes joining at once from the number of Nodes the
// cluster is expected to have: ForNodes(n) returns --concurrent-node-syncs,
// --concurrent-node-lifecycle-syncs, --kube-api-qps and --kube-api-burst.
// `awsccmctl install` renders them; docs/install-sizing.md explains them to
// users.
//
// # Why
//
// With k8s.io/cloud-provider's defaults (one node worker, QPS 20, burst 30)
// 1,000 Nodes joining at once take about 149 s to initialize, with this CCM
// and with upstream's alike: the client-side rate limit is the bound, not
// AWS.
//
// # What initializing a Node costs
//
// The cloud-node controller (k8s.io/cloud-provider controllers/node,
// syncNode) initializes a Node with RequestsPerNode kube-API requests: an
// Update of the Node (providerID, instance-type, zone and region labels, the
// uninitialized taint removed), a PATCH of its status (the addresses, in
// updateNodeAddress), and the create of its Synced Event (the controller's
// event broadcaster writes through the controller's own client). The sync
// of the now initialized Node that its update triggers (reconcileNodeLabels)
// writes nothing while the labels agree. Every controller gets its own
// client from the controller-manager's client builder, so each has a token
// bucket of its own with --kube-api-qps and --kube-api-burst: a join is
// bounded by the node controller's bucket alone (and the route controller's,
// with cloud routes, patches NetworkUnavailable from a bucket of its own).
//
// # The formula
//
// For N Nodes registered at once to be initialized within JoinSeconds of the
// token bucket's time: a bucket serves burst + qps·t requests by time t, so
// with burst = BurstSeconds·qps the condition RequestsPerNode·N <=
// qps·(BurstSeconds + JoinSeconds) gives
//
//	kube-api-qps                    = clamp(ceil(3·N / 6), 20, 1000)   (N/2)
//	kube-api-burst                  = clamp(2·qps, 30, 2000)
//	concurrent-node-syncs           = clamp(ceil(qps / 10), 1, 50)
//	concurrent-node-lifecycle-syncs = clamp(ceil(N / 1000), 1, 5)
//
// Workers: a worker syncs one Node at a time, and a sync is two API round
// trips plus the instance view's 20 ms batch window, 30-100 ms, so one worker
// serves 30-100 requests/s of the limit. One worker per RequestsPerWorker
// (10) requests/s keeps the bucket, not the workers, the bound even when the
// API's latency triples under the join's own load.
//
// Lifecycle workers: the cloud-node-lifecycle controller looks at every
// NotReady Node once per --node-monitor-period (5 s) with
// --concurrent-node-lifecycle-syncs workers; acting on one (deleting it, or
// the shutdown taint) is a synchronous API write of about 50 ms under load.
// A pass that acts on a tenth of the Nodes (the most
// --aws-max-absent-node-deletions lets go at once by default) then still
// ends within the period: 0.1·N × 50 ms / 5 s = N/1000 workers.
//
// Figures (the time is the client-side bound alone, all N registered at
// once; the bench measures the real one, registration included):
//
//	Nodes   qps    burst  node syncs  lifecycle syncs  join bound
//	100     50     100    5           1                4 s
//	1,000   500    1,000  50          1                4 s
//	5,000   1,000  2,000  50          5                13 s
//
// # Floors and caps
//
// The floors are the binary's defaults: a small cluster never gets less than
// it would without the flags. The caps protect the API server:
//
//   - QPS MaxQPS and burst MaxBurst, reached at 2,000 Nodes: 5,000 Nodes, the
//     largest cluster Kubernetes supports, still initialize within 13 s of
//     the bucket's time, at a write rate twice what 5,000 kubelets keep up at
//     all times by renewing their Leases (one write per Node every 10 s).
//   - MaxWorkers node workers: the node controller never has more than about
//     50 requests in flight, half of the 98 seats API Priority and Fairness
//     gives the workload-high priority level on a default API server (600
//     seats, --max-requests-inflight 400 plus --max-mutating-requests-inflight
//     200, split by nominal shares: workload-high has 40 of 245).
//   - MaxLifecycleWorkers lifecycle workers: the figure for 5,000 Nodes.
//
// API Priority and Fairness protects the server's other priority levels from
// the CCM: its ServiceAccount in kube-system matches the FlowSchema
// kube-system-service-accounts, priority level workload-high (in another
// namespace service-accounts, workload-low), and a level gets only its seats
// (plus what others lend), queues the rest and rejects with 429 (which
// client-go retries) what does not fit in its queues. So the kubelets' Node
// status and Lease writes (node-high), the control plane's leader election
// and the system level keep their seats during a join. It does not bound a
// rate: a level with free seats admits as many writes per second as it
// completes, so etcd's write rate and the fan-out of every Node write to
// every watcher of Nodes (the scheduler, kube-controller-manager, CNI agents
// that watch all Nodes) are bounded only by the client's limit (APF's
// estimate charges a write extra seats for its watchers, which limits how
// many such writes run at once, not how many complete per second).
// Nor does it keep the CCM from slowing kube-controller-manager and
// kube-scheduler, which share workload-high in flows of their own, or the
// other kube-system ServiceAccounts, whose requests are one flow with the
// CCM's (that FlowSchema distinguishes flows by namespace). And it is per
// API server: each instance of an HA control plane limits only what reaches
// it.
package sizing
