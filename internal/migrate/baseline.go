package migrate

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The guards' baseline is kept apart from the journal, in ConfigMaps of its
// own written once (BaselineName, -1, -2, ...): compact JSON, gzipped, cut
// into pieces a ConfigMap holds. In the journal it was about 144 bytes a
// Node, rewritten by every heartbeat and step record, and past about 7,000
// Nodes the journal outgrew the 1 MiB a ConfigMap holds. The journal now
// keeps only a BaselineRef: how many pieces, and the digest they must add
// up to.

// BaselineRef is where the journal's baseline is kept.
type BaselineRef struct {
	// Pieces is how many ConfigMaps hold it: BaselineName, then -1 ... .
	Pieces int `json:"pieces"`
	// SHA256 is the digest of the gzipped baseline the pieces join into.
	SHA256 string `json:"sha256"`
	// Bytes is the gzipped baseline's size.
	Bytes int `json:"bytes"`
	// Nodes and LoadBalancers count what it holds, for a person reading
	// the journal's ConfigMap or its local mirror; the gate counts the
	// baseline it reads.
	Nodes         int `json:"nodes"`
	LoadBalancers int `json:"loadBalancers"`
}

// baselineKey is each piece's key in its ConfigMap's binaryData.
const baselineKey = "baseline.json.gz"

// baselinePieceBytes is the most a piece holds: a ConfigMap's data may not
// exceed 1 MiB, and its name and labels count too.
var baselinePieceBytes = 768 << 10

// baselinePieceName names the i-th ConfigMap of the baseline.
func baselinePieceName(i int) string {
	if i == 0 {
		return BaselineName
	}
	return fmt.Sprintf("%s-%d", BaselineName, i)
}

// writeBaseline stores b in its ConfigMaps and returns the journal's
// reference to them. Pieces left by an earlier attempt are overwritten: the
// reference is written to the journal only after every piece, so a run
// that died in between left none that a journal points to.
func writeBaseline(ctx context.Context, client kubernetes.Interface, b *Baseline) (*BaselineRef, error) {
	raw, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	data := gz.Bytes()
	sum := sha256.Sum256(data)
	ref := &BaselineRef{SHA256: hex.EncodeToString(sum[:]), Bytes: len(data), Nodes: len(b.ProviderIDs), LoadBalancers: len(b.Hostnames)}
	cms := client.CoreV1().ConfigMaps(Namespace)
	for len(data) > 0 || ref.Pieces == 0 {
		n := min(len(data), baselinePieceBytes)
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: baselinePieceName(ref.Pieces), Namespace: Namespace, Labels: map[string]string{LabelManagedBy: ManagedBy}},
			BinaryData: map[string][]byte{baselineKey: data[:n]},
		}
		_, err := cms.Create(ctx, cm, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		}
		if err != nil {
			return nil, fmt.Errorf("write the guards' baseline to ConfigMap %s/%s: %w", Namespace, cm.Name, err)
		}
		data = data[n:]
		ref.Pieces++
	}
	return ref, nil
}

// readBaseline reads the baseline ref points to, and checks it is whole.
func readBaseline(ctx context.Context, client kubernetes.Interface, ref *BaselineRef) (*Baseline, error) {
	var data []byte
	for i := range ref.Pieces {
		name := baselinePieceName(i)
		cm, err := client.CoreV1().ConfigMaps(Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("read the guards' baseline, piece %d of %d (ConfigMap %s/%s): %w", i+1, ref.Pieces, Namespace, name, err)
		}
		data = append(data, cm.BinaryData[baselineKey]...)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != ref.SHA256 {
		return nil, fmt.Errorf("the guards' baseline in ConfigMaps %s/%s... (%d pieces) has digest %s, the journal says %s: "+
			"it was changed after apply wrote it; the guards cannot tell what the cluster was (roll back, or restore the ConfigMaps)",
			Namespace, BaselineName, ref.Pieces, got, ref.SHA256)
	}
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("the guards' baseline: %w", err)
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("the guards' baseline: %w", err)
	}
	var b Baseline
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("the guards' baseline: %w", err)
	}
	return &b, nil
}

// baseline is the run's baseline: read once from its ConfigMaps (or, in a
// journal written before they held it, from the journal itself); nil when
// verify-cluster has not taken it yet.
func (e *env) baseline(ctx context.Context) (*Baseline, error) {
	switch {
	case e.base != nil:
		return e.base, nil
	case e.journal.Baseline != nil:
		e.base = e.journal.Baseline
	case e.journal.BaselineRef != nil:
		b, err := readBaseline(ctx, e.client, e.journal.BaselineRef)
		if err != nil {
			return nil, err
		}
		e.base = b
	}
	return e.base, nil
}
