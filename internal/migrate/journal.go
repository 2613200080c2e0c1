package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// StepState is where one step stands.
type StepState string

// Step states.
const (
	StatePending StepState = "pending"
	// StateRunning: the action started; resume runs it again (every action
	// is idempotent) and then waits at the gate.
	StateRunning StepState = "running"
	StateDone    StepState = "done"
	StateFailed  StepState = "failed"
	// StateUndoing and StateUndone: rollback.
	StateUndoing StepState = "undoing"
	StateUndone  StepState = "undone"
)

// Journal is the migration's record, kept in the ConfigMap
// Namespace/JournalName and mirrored to a local file.
type Journal struct {
	// Plan and PlanDigest tie the journal to one plan: another plan is
	// refused while this one is unfinished.
	Plan       string `json:"plan"`
	PlanDigest string `json:"planDigest"`
	Mode       Mode   `json:"mode"`
	// Holder is the run that may change the journal and the cluster now.
	Holder *Holder `json:"holder,omitempty"`
	// Steps hold every step's record, in plan order.
	Steps []StepRecord `json:"steps"`
	// BaselineRef points to the cluster as verify-cluster saw it, which
	// the guards compare with: kept in ConfigMaps of its own
	// (baseline.go), so the journal every heartbeat rewrites stays small.
	BaselineRef *BaselineRef `json:"baselineRef,omitempty"`
	// Baseline is the same, held in the journal itself by versions before
	// BaselineRef; read from a journal they began, never written now.
	Baseline *Baseline `json:"baseline,omitempty"`
	// Handover is what the cut-over measured.
	Handover *HandoverRecord `json:"handover,omitempty"`
	// KubeadmConfigOriginal is kubeadm-config's ClusterConfiguration before
	// the kubeadm-config step, for its undo.
	KubeadmConfigOriginal string `json:"kubeadmConfigOriginal,omitempty"`
}

// Holder identifies a run of apply, resume or rollback.
type Holder struct {
	ID        string      `json:"id"`
	Host      string      `json:"host"`
	PID       int         `json:"pid"`
	Command   string      `json:"command"`
	Since     metav1.Time `json:"since"`
	Heartbeat metav1.Time `json:"heartbeat"`
}

// StepRecord is one step's history.
type StepRecord struct {
	Name     string       `json:"name"`
	State    StepState    `json:"state"`
	Started  *metav1.Time `json:"started,omitempty"`
	Finished *metav1.Time `json:"finished,omitempty"`
	// Message says what the step saw last: the evidence that passed its
	// gate, or why it failed.
	Message  string   `json:"message,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	// Order is the order in which to run a control-plane node step, one
	// node at a time: the node whose kube-controller-manager leads last,
	// so the Leases change hands once. Scripts read it from `status -o json`.
	Order []string `json:"order,omitempty"`
}

// Baseline is what the guards hold the cluster to.
type Baseline struct {
	// ProviderIDs maps every Node to its providerID.
	ProviderIDs map[string]string `json:"providerIDs"`
	// Hostnames maps every LoadBalancer Service to its status hostname.
	Hostnames map[string]string `json:"hostnames"`
	// NodeFields maps every Node to the digest of the fields the move must
	// not change (nodeFieldsDigest): its addresses and its cloud and
	// hostname labels. A digest, not the values: a 12-byte digest is
	// smaller than the values, and compresses as well. Absent in a
	// journal from before this guard, which then skips it.
	NodeFields map[string]string `json:"nodeFields,omitempty"`
	// NotReady lists the Nodes that were not Ready at the baseline: the
	// Ready guard holds only the others to staying Ready.
	NotReady []string `json:"notReady,omitempty"`
}

// HandoverRecord is the measured hand-over of the cloud loops.
type HandoverRecord struct {
	// KCMLastRenew is the last renewal of the migration lease by
	// kube-controller-manager that the gate saw.
	KCMLastRenew *metav1.MicroTime `json:"kcmLastRenew,omitempty"`
	// CCMAcquired is when the CCM acquired the migration lease.
	CCMAcquired *metav1.MicroTime `json:"ccmAcquired,omitempty"`
	// HolderExited is when a node saw the kube-controller-manager that held
	// the migration lease exit; apply released the Lease then.
	HolderExited *metav1.MicroTime `json:"holderExited,omitempty"`
	// Gap is CCMAcquired - HolderExited when a node saw the holder exit,
	// else CCMAcquired - KCMLastRenew (an upper bound: the holder stopped
	// some time after its last renewal): how long no manager ran the loops.
	Gap metav1.Duration `json:"gap"`
	// CCMIdentity is the CCM's leader identity.
	CCMIdentity string `json:"ccmIdentity,omitempty"`
}

// Record returns the named step's record.
func (j *Journal) Record(name string) *StepRecord {
	for i := range j.Steps {
		if j.Steps[i].Name == name {
			return &j.Steps[i]
		}
	}
	return nil
}

// Done reports whether every step is done.
func (j *Journal) Done() bool {
	for _, s := range j.Steps {
		if s.State != StateDone {
			return false
		}
	}
	return len(j.Steps) > 0
}

// ErrNoJournal means no migration was started in this cluster.
var ErrNoJournal = errors.New("no migration journal in the cluster (kube-system/" + JournalName + "): nothing was applied yet")

// HeldError says another run holds the journal.
type HeldError struct{ Holder Holder }

func (e *HeldError) Error() string {
	return fmt.Sprintf("another run holds the migration: %s (pid %d on %s) since %s, last heartbeat %s; wait for it, or if it is gone, `resume --takeover`",
		e.Holder.Command, e.Holder.PID, e.Holder.Host, e.Holder.Since.UTC().Format(time.RFC3339), e.Holder.Heartbeat.UTC().Format(time.RFC3339))
}

// Store reads and writes the journal with optimistic concurrency: every
// change is a read-modify-write on the ConfigMap's resourceVersion, so two
// runs cannot interleave their writes; the Holder field makes sure only one
// run acts at a time.
type Store struct {
	Client kubernetes.Interface
	// LocalPath, when set, gets a copy of the journal after every write.
	LocalPath string
	Now       func() time.Time
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Load returns the journal, or ErrNoJournal.
func (s *Store) Load(ctx context.Context) (*Journal, error) {
	cm, err := s.Client.CoreV1().ConfigMaps(Namespace).Get(ctx, JournalName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, ErrNoJournal
	}
	if err != nil {
		return nil, fmt.Errorf("read journal %s/%s: %w", Namespace, JournalName, err)
	}
	return decodeJournal(cm)
}

func decodeJournal(cm *corev1.ConfigMap) (*Journal, error) {
	var j Journal
	if err := json.Unmarshal([]byte(cm.Data[JournalKey]), &j); err != nil {
		return nil, fmt.Errorf("journal %s/%s key %s: %w (fix or delete the ConfigMap by hand)", Namespace, JournalName, JournalKey, err)
	}
	return &j, nil
}

// Create writes a new journal; it fails with an AlreadyExists error when one
// exists.
func (s *Store) Create(ctx context.Context, j *Journal) error {
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: JournalName, Namespace: Namespace, Labels: map[string]string{LabelManagedBy: ManagedBy}},
		Data:       map[string]string{JournalKey: string(data)},
	}
	if _, err := s.Client.CoreV1().ConfigMaps(Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return err
	}
	return s.mirror(j)
}

// journalBackoff retries conflicting journal writes: one run writes at a
// time, but status readers and a run taking over may race it.
var journalBackoff = wait.Backoff{Steps: 30, Duration: 10 * time.Millisecond, Factor: 1.5, Jitter: 1, Cap: time.Second}

// Update applies change to the current journal and writes it back only if
// nobody wrote in between (resourceVersion), retrying on conflicts. change
// may return an error to abort without writing.
func (s *Store) Update(ctx context.Context, change func(*Journal) error) (*Journal, error) {
	var out *Journal
	err := retry.RetryOnConflict(journalBackoff, func() error {
		cm, err := s.Client.CoreV1().ConfigMaps(Namespace).Get(ctx, JournalName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return ErrNoJournal
		}
		if err != nil {
			return err
		}
		j, err := decodeJournal(cm)
		if err != nil {
			return err
		}
		if err := change(j); err != nil {
			return err
		}
		data, err := json.MarshalIndent(j, "", "  ")
		if err != nil {
			return err
		}
		cm = cm.DeepCopy()
		cm.Data[JournalKey] = string(data)
		if _, err := s.Client.CoreV1().ConfigMaps(Namespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			return err
		}
		out = j
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, s.mirror(out)
}

// HolderDeadOn reports whether the journal's holder was a process on host
// that no longer runs: a run that died holding the journal on this machine
// is gone, so the next one need not wait for its heartbeat to go stale.
// Without a journal, or a holder, it is false.
func (s *Store) HolderDeadOn(ctx context.Context, host string) bool {
	j, err := s.Load(ctx)
	if err != nil || j.Holder == nil {
		return false
	}
	return j.Holder.deadOn(host, processAlive)
}

// deadOn: the holder ran on host, and alive says its process is gone.
func (h Holder) deadOn(host string, alive func(pid int) bool) bool {
	return h.Host == host && !alive(h.PID)
}

// Acquire makes h the journal's holder. Another live holder is refused with
// a *HeldError; a holder whose heartbeat is older than HolderStaleAfter, or
// any holder with takeover, is replaced.
func (s *Store) Acquire(ctx context.Context, h Holder, takeover bool) (*Journal, error) {
	return s.Update(ctx, func(j *Journal) error {
		if cur := j.Holder; cur != nil && cur.ID != h.ID && !takeover && s.now().Sub(cur.Heartbeat.Time) < HolderStaleAfter {
			return &HeldError{Holder: *cur}
		}
		now := metav1.NewTime(s.now())
		h.Since, h.Heartbeat = now, now
		j.Holder = &h
		return nil
	})
}

// Heartbeat renews h's hold; it fails when another run took the journal.
func (s *Store) Heartbeat(ctx context.Context, id string) error {
	_, err := s.Update(ctx, func(j *Journal) error {
		if j.Holder == nil || j.Holder.ID != id {
			return errLostHold(j.Holder)
		}
		j.Holder.Heartbeat = metav1.NewTime(s.now())
		return nil
	})
	return err
}

// Release clears the holder if it is still id.
func (s *Store) Release(ctx context.Context, id string) error {
	_, err := s.Update(ctx, func(j *Journal) error {
		if j.Holder != nil && j.Holder.ID == id {
			j.Holder = nil
		}
		return nil
	})
	return err
}

func errLostHold(h *Holder) error {
	if h == nil {
		return errors.New("this run no longer holds the migration journal")
	}
	return fmt.Errorf("this run no longer holds the migration journal: %w", &HeldError{Holder: *h})
}

// mirror writes the local copy (best effort is not enough: a failed write
// is reported, since `status` may be read from it when the cluster is down).
func (s *Store) mirror(j *Journal) error {
	if s.LocalPath == "" || j == nil {
		return nil
	}
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	// The mirror is the operator's own record (0600 below); a directory made
	// for it is theirs alone too.
	if err := os.MkdirAll(filepath.Dir(s.LocalPath), 0o700); err != nil {
		return fmt.Errorf("journal mirror: %w", err)
	}
	tmp := s.LocalPath + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("journal mirror: %w", err)
	}
	return os.Rename(tmp, s.LocalPath)
}

// ReadLocal reads the local mirror of the journal.
func ReadLocal(path string) (*Journal, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var j Journal
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &j, nil
}
