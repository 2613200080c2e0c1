package clusterchecks

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// pv seeds a 1Gi PersistentVolume: an in-tree awsElasticBlockStore one, or
// one of the EBS CSI driver. The apiserver's StorageObjectInUseProtection
// admission adds the pv-protection finalizer, which only a controller would
// remove: the test removes it before seed.cleanup deletes the PV.
func (s *seed) pv(name string, inTree bool) {
	s.t.Helper()
	ctx := context.Background()
	pv := &corev1.PersistentVolume{ObjectMeta: s.meta("", name), Spec: corev1.PersistentVolumeSpec{
		Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
	}}
	if inTree {
		pv.Spec.AWSElasticBlockStore = &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://us-east-1a/vol-0a1b2c3d4e5f60001", FSType: "ext4"}
	} else {
		pv.Spec.CSI = &corev1.CSIPersistentVolumeSource{Driver: ebsCSIDriver, VolumeHandle: "vol-0a1b2c3d4e5f60002"}
	}
	if _, err := s.cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create persistentvolume %s: %v", name, err)
	}
	s.t.Cleanup(func() {
		_, err := s.cs.CoreV1().PersistentVolumes().Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		if err != nil {
			s.t.Errorf("remove the finalizers of persistentvolume %s: %v", name, err)
		}
	})
}

func (s *seed) storageClass(name, provisioner string) {
	s.t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: s.meta("", name), Provisioner: provisioner}
	if _, err := s.cs.StorageV1().StorageClasses().Create(context.Background(), sc, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create storageclass %s: %v", name, err)
	}
}

func (s *seed) csiDriver(name string) {
	s.t.Helper()
	d := &storagev1.CSIDriver{ObjectMeta: s.meta("", name), Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(true)}}
	if _, err := s.cs.StorageV1().CSIDrivers().Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create csidriver %s: %v", name, err)
	}
}

// csiNode seeds the CSINode of node as its kubelet writes it: drivers in
// spec.drivers, migrated (if not "") in the migrated-plugins annotation.
func (s *seed) csiNode(node, migrated string, drivers ...string) {
	s.t.Helper()
	cn := &storagev1.CSINode{ObjectMeta: s.meta("", node)}
	if migrated != "" {
		cn.Annotations = map[string]string{migratedPluginsAnnotation: migrated}
	}
	for _, d := range drivers {
		cn.Spec.Drivers = append(cn.Spec.Drivers, storagev1.CSINodeDriver{Name: d, NodeID: "i-0a1b2c3d4e5f60001", TopologyKeys: []string{"topology.ebs.csi.aws.com/zone"}})
	}
	if _, err := s.cs.StorageV1().CSINodes().Create(context.Background(), cn, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create csinode %s: %v", node, err)
	}
}

// inlineEBSPod is a Pod with an inline in-tree EBS volume.
func inlineEBSPod(ns, name, node string) *corev1.Pod {
	p := workload(ns, name, node, "public.ecr.aws/docker/library/busybox:1.37")
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
		AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-0a1b2c3d4e5f60003"}}}}
	return p
}

// allMigrated is what a 1.23+ kubelet writes: every in-tree plugin it hands
// to CSI.
const allMigrated = "kubernetes.io/aws-ebs,kubernetes.io/azure-disk,kubernetes.io/azure-file,kubernetes.io/cinder,kubernetes.io/gce-pd,kubernetes.io/vsphere-volume"

// TestStorageChecks seeds EBS storage in the real apiserver and pins the
// status and message of both storage checks.
func TestStorageChecks(t *testing.T) {
	real := quietClient(testbed.Get(t).Config)
	pass, warn, fail := preflight.StatusPass, preflight.StatusWarn, preflight.StatusFail
	const migrationFix = "run the EBS CSI node DaemonSet (ebs-csi-node) on every Node"
	type want struct {
		status       preflight.Status
		message, fix string // message exactly; fix: a part of the remediation
	}
	cases := []struct {
		name            string
		seed            func(*seed)
		driver, migrate want
	}{
		{name: "no EBS at all",
			seed: func(s *seed) {
				s.nodes(v137, cp0, w1)
				s.storageClass("standard", "rancher.io/local-path")
			},
			driver:  want{pass, "no in-tree EBS volumes: no PersistentVolume with awsElasticBlockStore, no StorageClass with provisioner kubernetes.io/aws-ebs, no Pod with an inline awsElasticBlockStore volume", ""},
			migrate: want{pass, "no EBS volumes or StorageClasses, in-tree or CSI: nothing to migrate", ""}},
		{name: "in-tree PV without the driver",
			seed: func(s *seed) {
				s.nodes(v137, cp0, w1)
				s.pv("pvc-0b6f3a1e-intree", true)
				s.csiNode(cp0, allMigrated)
			},
			driver: want{fail, "in-tree EBS in use (1 PersistentVolume with awsElasticBlockStore (pvc-0b6f3a1e-intree)) but there is no CSIDriver ebs.csi.aws.com: " +
				"in-tree EBS volumes are provisioned, attached and mounted only through CSI migration to the EBS CSI driver (the in-tree plugin was removed in Kubernetes 1.27), so without it they stop working",
				"the Helm chart aws-ebs-csi-driver/aws-ebs-csi-driver"},
			migrate: want{fail, "in-tree EBS in use (1 PersistentVolume with awsElasticBlockStore (pvc-0b6f3a1e-intree)) but 2 of 2 Nodes cannot hand kubernetes.io/aws-ebs volumes to ebs.csi.aws.com: " +
				cp0 + " (no ebs.csi.aws.com driver), " + w1 + " (no CSINode)", migrationFix}},
		{name: "driver present but one CSINode not migrated",
			seed: func(s *seed) {
				s.nodes(v137, cp0, w1, w2)
				s.storageClass("gp2", ebsInTreePlugin)
				s.pv("pvc-1c7e4b2f-intree", true)
				s.pv("pvc-2d8f5c30-csi", false)
				s.csiDriver(ebsCSIDriver)
				s.csiNode(cp0, allMigrated, ebsCSIDriver)
				s.csiNode(w1, "kubernetes.io/gce-pd", ebsCSIDriver)
				s.csiNode(w2, allMigrated, "efs.csi.aws.com", ebsCSIDriver)
			},
			driver: want{pass, "in-tree EBS in use (1 PersistentVolume with awsElasticBlockStore (pvc-1c7e4b2f-intree), 1 StorageClass with provisioner kubernetes.io/aws-ebs (gp2)) " +
				"and CSIDriver ebs.csi.aws.com is installed to serve it", ""},
			migrate: want{fail, "in-tree EBS in use (1 PersistentVolume with awsElasticBlockStore (pvc-1c7e4b2f-intree), 1 StorageClass with provisioner kubernetes.io/aws-ebs (gp2)) " +
				"but 1 of 3 Nodes cannot hand kubernetes.io/aws-ebs volumes to ebs.csi.aws.com: " + w1 + " (kubernetes.io/aws-ebs not in storage.alpha.kubernetes.io/migrated-plugins)",
				"remove CSIMigrationAWS=false from its --feature-gates"}},
		{name: "everything migrated",
			seed: func(s *seed) {
				s.nodes(v137, cp0, w1)
				s.storageClass("gp2", ebsInTreePlugin)
				s.storageClass("gp3", ebsCSIDriver)
				s.pod(inlineEBSPod(metav1.NamespaceDefault, "legacy-db-0", w1))
				s.csiDriver(ebsCSIDriver)
				s.csiNode(cp0, allMigrated, ebsCSIDriver)
				s.csiNode(w1, "kubernetes.io/aws-ebs", ebsCSIDriver)
			},
			driver: want{pass, "in-tree EBS in use (1 StorageClass with provisioner kubernetes.io/aws-ebs (gp2), 1 Pod with an inline awsElasticBlockStore volume (default/legacy-db-0)) " +
				"and CSIDriver ebs.csi.aws.com is installed to serve it", ""},
			migrate: want{pass, "every Node's CSINode has driver ebs.csi.aws.com and kubernetes.io/aws-ebs in storage.alpha.kubernetes.io/migrated-plugins (2 Nodes): in-tree EBS volumes go through the CSI driver", ""}},
		{name: "CSI only, one Node without the driver",
			seed: func(s *seed) {
				s.nodes(v137, cp0, w1)
				s.storageClass("gp3", ebsCSIDriver)
				s.csiDriver(ebsCSIDriver)
				s.csiNode(cp0, "", ebsCSIDriver)
				s.csiNode(w1, allMigrated)
			},
			driver: want{pass, "no in-tree EBS volumes: no PersistentVolume with awsElasticBlockStore, no StorageClass with provisioner kubernetes.io/aws-ebs, no Pod with an inline awsElasticBlockStore volume", ""},
			migrate: want{warn, "no in-tree EBS volumes; EBS through CSI (1 StorageClass with provisioner ebs.csi.aws.com (gp3)), but no ebs.csi.aws.com driver in the CSINode of 1 of 2 Nodes, " +
				"so Pods with those volumes cannot start there: " + w1 + " (no ebs.csi.aws.com driver)", "keep Pods with EBS volumes off them"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSeed(t, real)
			tc.seed(s)
			rep, err := preflight.Run(context.Background(), Checks(Input{Client: real, Mode: preflight.ModePreInstall}),
				preflight.Options{Mode: preflight.ModePreInstall, Categories: []string{CategoryCluster, CategoryStorage}})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s\n%s", tc.name, table(rep))
			for id, w := range map[string]want{IDStorageEBSCSIDriver: tc.driver, IDStorageEBSCSIMigrated: tc.migrate} {
				f := finding(rep, id)
				if f.Status != w.status || f.Message != w.message || !strings.Contains(f.Remediation, w.fix) {
					t.Errorf("%s = %s\n  %s\n  | %s\nwant %s\n  %s\n  | …%s…", id, f.Status, f.Message, f.Remediation, w.status, w.message, w.fix)
				}
				if (f.Status == pass) != (f.Remediation == "") {
					t.Errorf("%s: remediation %q with status %s", id, f.Remediation, f.Status)
				}
			}
		})
	}
}

// TestStorageListsTenNames: the messages name at most ten objects each, and
// CSIDrivers and CSINodes are read only when EBS is in use.
func TestStorageListsTenNames(t *testing.T) {
	var objs []runtime.Object
	for i := range 12 {
		objs = append(objs, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pv-%02d", i)},
			Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{AWSElasticBlockStore: &corev1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}}})
		objs = append(objs, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%02d", i)}})
	}
	cs := fake.NewClientset(objs...)
	cs.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: v137}
	rep, err := preflight.Run(context.Background(), Checks(Input{Client: cs, Mode: preflight.ModePreInstall}),
		preflight.Options{Mode: preflight.ModePreInstall, Categories: []string{CategoryCluster, CategoryStorage}})
	if err != nil {
		t.Fatal(err)
	}
	pvs := "12 PersistentVolumes with awsElasticBlockStore (pv-00, pv-01, pv-02, pv-03, pv-04, pv-05, pv-06, pv-07, pv-08, pv-09 and 2 more)"
	if f := finding(rep, IDStorageEBSCSIDriver); f.Status != preflight.StatusFail || !strings.HasPrefix(f.Message, "in-tree EBS in use ("+pvs+") but there is no CSIDriver") {
		t.Errorf("%s = %s: %s", f.ID, f.Status, f.Message)
	}
	nodes := "node-00 (no CSINode), node-01 (no CSINode), node-02 (no CSINode), node-03 (no CSINode), node-04 (no CSINode), node-05 (no CSINode), node-06 (no CSINode), node-07 (no CSINode), node-08 (no CSINode), node-09 (no CSINode) and 2 more"
	if f := finding(rep, IDStorageEBSCSIMigrated); f.Status != preflight.StatusFail || !strings.HasSuffix(f.Message, "but 12 of 12 Nodes cannot hand kubernetes.io/aws-ebs volumes to ebs.csi.aws.com: "+nodes) {
		t.Errorf("%s = %s: %s", f.ID, f.Status, f.Message)
	}

	empty := fake.NewClientset()
	empty.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: v137}
	if _, err := preflight.Run(context.Background(), Checks(Input{Client: empty, Mode: preflight.ModePreInstall}),
		preflight.Options{Mode: preflight.ModePreInstall, Categories: []string{CategoryCluster, CategoryStorage}}); err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, a := range empty.Actions() {
		calls = append(calls, a.GetVerb()+" "+a.GetResource().Resource)
	}
	if got, want := strings.Join(calls, ", "), "get version, list persistentvolumes, list storageclasses, list pods"; got != want {
		t.Errorf("calls = %s, want %s", got, want)
	}
}
