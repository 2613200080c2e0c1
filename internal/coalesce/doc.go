// Package coalesce joins concurrent requests for keys into one batched run,
// like a group commit: the first request opens a batch, requests arriving
// within a short window join it, and every waiter gets the run's result.
//
// The CCM's node controllers ask about one Node at a time from several
// workers; AWS answers up to hundreds of IDs per call. The instance view
// (DescribeInstances) and the topology labels (DescribeInstanceTopology)
// both turn those per-Node questions into one call per batch with it.
package coalesce
