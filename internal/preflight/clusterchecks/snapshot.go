package clusterchecks

import (
	"context"
	"fmt"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
)

// PageSize is the Limit of every list call; larger sets are read page by
// page with the Continue token.
const PageSize = 500

const (
	kubeSystem       = "kube-system"
	kubeadmConfigMap = "kubeadm-config"
)

// lazy holds one value read at most once, by whichever check asks first.
type lazy[T any] struct {
	once sync.Once
	val  T
	err  error
}

func (l *lazy[T]) get(ctx context.Context, read func(context.Context) (T, error)) (T, error) {
	l.once.Do(func() { l.val, l.err = read(ctx) })
	return l.val, l.err
}

// snapshot is what the checks of one Checks call read from the cluster.
// Each kind is read once; the checks share it.
type snapshot struct {
	client  kubernetes.Interface
	version lazy[*version.Info]
	nodes   lazy[[]corev1.Node]
	pods    lazy[[]corev1.Pod]
	leases  lazy[[]coordinationv1.Lease]
	kubeadm lazy[*corev1.ConfigMap] // nil when the ConfigMap does not exist
	// Storage, read only by the storage checks, and CSIDrivers and CSINodes
	// only when EBS is in use.
	pvs        lazy[[]corev1.PersistentVolume]
	classes    lazy[[]storagev1.StorageClass]
	csiDrivers lazy[[]storagev1.CSIDriver]
	csiNodes   lazy[[]storagev1.CSINode]
}

func (s *snapshot) serverVersion(ctx context.Context) (*version.Info, error) {
	return s.version.get(ctx, func(ctx context.Context) (*version.Info, error) {
		v, err := s.client.Discovery().ServerVersionWithContext(ctx)
		if err != nil {
			return nil, fmt.Errorf("get /version: %w", err)
		}
		return v, nil
	})
}

// Nodes returns every Node.
func (s *snapshot) Nodes(ctx context.Context) ([]corev1.Node, error) {
	return s.nodes.get(ctx, func(ctx context.Context) ([]corev1.Node, error) {
		return listAll(ctx, "nodes", func(ctx context.Context, o metav1.ListOptions) ([]corev1.Node, string, error) {
			l, err := s.client.CoreV1().Nodes().List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
	})
}

// Pods returns every Pod in every namespace: the control plane's mirror
// Pods and other cloud-controller-managers both come from this one list.
func (s *snapshot) Pods(ctx context.Context) ([]corev1.Pod, error) {
	return s.pods.get(ctx, func(ctx context.Context) ([]corev1.Pod, error) {
		return listAll(ctx, "pods", func(ctx context.Context, o metav1.ListOptions) ([]corev1.Pod, string, error) {
			l, err := s.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
	})
}

// Leases returns the Leases in kube-system, where the CCM's and the leader
// migration's locks live.
func (s *snapshot) Leases(ctx context.Context) ([]coordinationv1.Lease, error) {
	return s.leases.get(ctx, func(ctx context.Context) ([]coordinationv1.Lease, error) {
		return listAll(ctx, "leases in "+kubeSystem, func(ctx context.Context, o metav1.ListOptions) ([]coordinationv1.Lease, string, error) {
			l, err := s.client.CoordinationV1().Leases(kubeSystem).List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
	})
}

// KubeadmConfig returns ConfigMap kube-system/kubeadm-config, nil when the
// cluster has none (not a kubeadm cluster).
func (s *snapshot) KubeadmConfig(ctx context.Context) (*corev1.ConfigMap, error) {
	return s.kubeadm.get(ctx, func(ctx context.Context) (*corev1.ConfigMap, error) {
		cm, err := s.client.CoreV1().ConfigMaps(kubeSystem).Get(ctx, kubeadmConfigMap, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("get configmap %s/%s: %w", kubeSystem, kubeadmConfigMap, err)
		}
		return cm, nil
	})
}

// PersistentVolumes returns every PersistentVolume.
func (s *snapshot) PersistentVolumes(ctx context.Context) ([]corev1.PersistentVolume, error) {
	return s.pvs.get(ctx, func(ctx context.Context) ([]corev1.PersistentVolume, error) {
		return listAll(ctx, "persistentvolumes", func(ctx context.Context, o metav1.ListOptions) ([]corev1.PersistentVolume, string, error) {
			l, err := s.client.CoreV1().PersistentVolumes().List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
	})
}

// StorageClasses returns every StorageClass.
func (s *snapshot) StorageClasses(ctx context.Context) ([]storagev1.StorageClass, error) {
	return s.classes.get(ctx, func(ctx context.Context) ([]storagev1.StorageClass, error) {
		return listAll(ctx, "storageclasses", func(ctx context.Context, o metav1.ListOptions) ([]storagev1.StorageClass, string, error) {
			l, err := s.client.StorageV1().StorageClasses().List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
	})
}

// CSIDrivers returns every CSIDriver.
func (s *snapshot) CSIDrivers(ctx context.Context) ([]storagev1.CSIDriver, error) {
	return s.csiDrivers.get(ctx, func(ctx context.Context) ([]storagev1.CSIDriver, error) {
		return listAll(ctx, "csidrivers", func(ctx context.Context, o metav1.ListOptions) ([]storagev1.CSIDriver, string, error) {
			l, err := s.client.StorageV1().CSIDrivers().List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
	})
}

// CSINodes returns every CSINode (one per Node whose kubelet registered it).
func (s *snapshot) CSINodes(ctx context.Context) ([]storagev1.CSINode, error) {
	return s.csiNodes.get(ctx, func(ctx context.Context) ([]storagev1.CSINode, error) {
		return listAll(ctx, "csinodes", func(ctx context.Context, o metav1.ListOptions) ([]storagev1.CSINode, string, error) {
			l, err := s.client.StorageV1().CSINodes().List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
	})
}

// listAll reads every page of a list.
func listAll[T any](ctx context.Context, what string, page func(context.Context, metav1.ListOptions) ([]T, string, error)) ([]T, error) {
	var all []T
	opts := metav1.ListOptions{Limit: PageSize}
	for {
		items, next, err := page(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", what, err)
		}
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		opts.Continue = next
	}
}

// readFix is the remediation for a read that failed.
func readFix(err error) string {
	if apierrors.IsForbidden(err) {
		return "grant the identity preflight runs as get and list on nodes, pods, configmaps, persistentvolumes, coordination.k8s.io leases and storage.k8s.io storageclasses, csidrivers and csinodes (a ClusterRole bound with a ClusterRoleBinding), or run preflight as a cluster admin"
	}
	return "check that the API server answers (`kubectl get --raw /readyz`) and run preflight again"
}
