package nodephase

import (
	"strings"
	"testing"
)

const podHead = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-controller-manager\n  namespace: kube-system\n"

func TestEditManifest(t *testing.T) {
	cases := []struct {
		name string
		in   string
		edit podEdit
		want string
	}{
		{
			name: "comments, quotes and trailing comments are kept",
			edit: kcmExternal,
			in: podHead + `spec:
  containers:
  # the controller manager
  - command:
    - kube-controller-manager
    # cloud settings
    - "--cloud-config=/etc/kubernetes/cloud.conf" # in-tree
    - '--cloud-provider=aws'   # in-tree too
    - --v=2
    image: registry.k8s.io/kube-controller-manager:v1.26.15
    name: kube-controller-manager
`,
			want: podHead + `spec:
  containers:
  # the controller manager
  - command:
    - kube-controller-manager
    # cloud settings
    - '--cloud-provider=external'   # in-tree too
    - --v=2
    image: registry.k8s.io/kube-controller-manager:v1.26.15
    name: kube-controller-manager
`,
		},
		{
			name: "inserted items take the quoting of the item before",
			edit: podEdit{component: componentKCM, ops: kcmLeaderMigration.ops},
			in: podHead + `spec:
  containers:
  - command:
    - "kube-controller-manager"
    - "--allocate-node-cidrs=true"
    - "--v=2"
    name: kcm
`,
			want: podHead + `spec:
  containers:
  - command:
    - "kube-controller-manager"
    - "--allocate-node-cidrs=true"
    - "--enable-leader-migration=true"
    - "--leader-migration-config=/etc/kubernetes/awsccmctl/leader-migration.yaml"
    - "--v=2"
    name: kcm
`,
		},
		{
			name: "indented sequences, four-space mappings, new volumeMounts and volumes keys",
			edit: kcmLeaderMigration,
			in: podHead + `spec:
    containers:
      - name: kcm
        command:
          - kube-controller-manager
          - --cloud-provider=aws
    hostNetwork: true
status: {}
`,
			want: podHead + `spec:
    containers:
      - name: kcm
        command:
          - kube-controller-manager
          - --cloud-provider=aws
          - --enable-leader-migration=true
          - --leader-migration-config=/etc/kubernetes/awsccmctl/leader-migration.yaml
        volumeMounts:
          - mountPath: /etc/kubernetes/awsccmctl/leader-migration.yaml
            name: awsccmctl-leader-migration
            readOnly: true
    hostNetwork: true
    volumes:
      - hostPath:
          path: /etc/kubernetes/awsccmctl/leader-migration.yaml
          type: File
        name: awsccmctl-leader-migration
status: {}
`,
		},
		{
			name: "an args list emptied at the head of a container item",
			edit: apiServerExternal,
			in: podHead + `spec:
  containers:
  - args:
    - --cloud-provider=aws
    command:
    - kube-apiserver
    name: kube-apiserver
`,
			want: podHead + `spec:
  containers:
  - args: []
    command:
    - kube-apiserver
    name: kube-apiserver
`,
		},
		{
			name: "an emptied list elsewhere loses its key",
			edit: apiServerExternal,
			in: podHead + `spec:
  containers:
  - name: kube-apiserver
    command:
    - kube-apiserver
    args:
    - --cloud-provider=aws
    image: x
`,
			want: podHead + `spec:
  containers:
  - name: kube-apiserver
    command:
    - kube-apiserver
    image: x
`,
		},
		{
			name: "CRLF line breaks",
			edit: kcmLeaderMigration,
			in: strings.ReplaceAll(podHead+`spec:
  containers:
  - command:
    - kube-controller-manager
    - --v=2
    name: kcm
    volumeMounts:
    - mountPath: /a
      name: a
  volumes:
  - hostPath:
      path: /a
    name: a
`, "\n", "\r\n"),
			want: strings.ReplaceAll(podHead+`spec:
  containers:
  - command:
    - kube-controller-manager
    - --enable-leader-migration=true
    - --leader-migration-config=/etc/kubernetes/awsccmctl/leader-migration.yaml
    - --v=2
    name: kcm
    volumeMounts:
    - mountPath: /a
      name: a
    - mountPath: /etc/kubernetes/awsccmctl/leader-migration.yaml
      name: awsccmctl-leader-migration
      readOnly: true
  volumes:
  - hostPath:
      path: /a
    name: a
  - hostPath:
      path: /etc/kubernetes/awsccmctl/leader-migration.yaml
      type: File
    name: awsccmctl-leader-migration
`, "\n", "\r\n"),
		},
		{
			name: "the volume is not added twice",
			edit: kcmLeaderMigration,
			in: podHead + `spec:
  containers:
  - command:
    - kube-controller-manager
    - --enable-leader-migration=true
    - --leader-migration-config=/etc/kubernetes/awsccmctl/leader-migration.yaml
    name: kcm
    volumeMounts:
    - mountPath: /etc/kubernetes/awsccmctl/leader-migration.yaml
      name: awsccmctl-leader-migration
  volumes:
  - hostPath:
      path: /etc/kubernetes/awsccmctl/leader-migration.yaml
    name: awsccmctl-leader-migration
`,
		},
		{
			name: "the last volume's removal removes the key",
			edit: kcmExternal,
			in: podHead + `spec:
  containers:
  - command:
    - kube-controller-manager
    name: kcm
    volumeMounts:
    - mountPath: /etc/kubernetes/awsccmctl/leader-migration.yaml
      name: awsccmctl-leader-migration
  volumes:
  - hostPath:
      path: /etc/kubernetes/awsccmctl/leader-migration.yaml
    name: awsccmctl-leader-migration
status: {}
`,
			want: podHead + `spec:
  containers:
  - command:
    - kube-controller-manager
    - --cloud-provider=external
    name: kcm
status: {}
`,
		},
		{
			name: "literal block script",
			edit: kcmExternal,
			in: podHead + `spec:
  containers:
  - command:
    - /bin/sh
    - -c
    - |
      exec /usr/local/bin/kube-controller-manager \
        --cloud-config=/etc/kubernetes/cloud.config \
        --cloud-provider=aws \
        --v=2 >>/var/log/kcm.log 2>&1
    name: kcm
`,
			want: podHead + `spec:
  containers:
  - command:
    - /bin/sh
    - -c
    - |
      exec /usr/local/bin/kube-controller-manager \
        --cloud-provider=external \
        --v=2 >>/var/log/kcm.log 2>&1
    name: kcm
`,
		},
		{
			name: "single-quoted script across lines",
			edit: podEdit{component: componentKCM, ops: kcmLeaderMigration.ops},
			in: podHead + `spec:
  containers:
  - command: ["/bin/sh", "-c"]
    args:
    - 'exec kube-controller-manager --allocate-node-cidrs=true
      --v=2 > /var/log/kcm.log'
    name: kcm
`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := editManifest("/m.yaml", []byte(c.in), c.edit)
			if c.name == "single-quoted script across lines" {
				// The command is a flow sequence: refused with the reason.
				if err == nil || !strings.Contains(err.Error(), "flow-style") {
					t.Fatalf("err = %v, want the flow-style refusal", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			if want == "" {
				want = c.in
			}
			if string(out) != want {
				t.Errorf("got:\n%s\nwant:\n%s\ndiff:\n%s", out, want, unifiedDiff("want", "got", []byte(want), out, true, true))
			}
			// Editing the result again changes nothing.
			again, err := editManifest("/m.yaml", out, c.edit)
			if err != nil || string(again) != string(out) {
				t.Errorf("second edit: %v\n%s", err, unifiedDiff("first", "second", out, again, true, true))
			}
		})
	}
}

func TestEditManifestScripts(t *testing.T) {
	cases := []struct{ name, item, want string }{
		{"double-quoted", `"/usr/local/bin/kube-controller-manager --cloud-provider=aws --v=2 1>>/var/log/kcm.log 2>&1"`,
			`"/usr/local/bin/kube-controller-manager --cloud-provider=external --v=2 1>>/var/log/kcm.log 2>&1"`},
		{"double-quoted with escapes", `"exec kube-controller-manager --cloud-config=\"/etc/c\" --cloud-provider=aws \\\n  --v=2"`,
			`"exec kube-controller-manager --cloud-provider=external \\\n  --v=2"`},
		{"single-quoted across lines", "'exec kube-controller-manager --cloud-provider=aws\n      --cloud-config=/c --v=2 >''/x'''",
			"'exec kube-controller-manager --cloud-provider=external --v=2 >''/x'''"},
		{"plain across lines", "exec kube-controller-manager --cloud-provider=aws\n      --cloud-config=/c\n      --v=2",
			"exec kube-controller-manager --cloud-provider=external\n      --v=2"},
		{"quoted flag words", `"exec kube-controller-manager '--cloud-provider=aws' \"--cloud-config=/c\""`,
			`"exec kube-controller-manager --cloud-provider=external"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := podHead + "spec:\n  containers:\n  - command:\n    - sh\n    - -c\n    - " + c.item + "\n    name: kcm\n"
			want := podHead + "spec:\n  containers:\n  - command:\n    - sh\n    - -c\n    - " + c.want + "\n    name: kcm\n"
			out, err := editManifest("/m.yaml", []byte(in), podEdit{component: componentKCM, ops: kcmExternal.ops})
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != want {
				t.Errorf("got:\n%s\nwant:\n%s", out, want)
			}
		})
	}
}

func TestEditManifestRefuses(t *testing.T) {
	cases := []struct {
		name, in string
		edit     podEdit
		want     string
	}{
		{"not YAML", "apiVersion: v1\nkind: Pod\nspec: [\n", kcmExternal, "not valid YAML"},
		{"not a Pod", "apiVersion: apps/v1\nkind: Deployment\nspec: {}\n", kcmExternal, "want v1 Pod"},
		{"two documents", podHead + "spec: {}\n---\n" + podHead, kcmExternal, "more than one YAML document"},
		{"no such container", podHead + "spec:\n  containers:\n  - command:\n    - kube-scheduler\n    name: s\n", kcmExternal, "no container runs kube-controller-manager"},
		{"flow-style args", podHead + "spec:\n  containers:\n  - args: [--cloud-provider=aws]\n    command:\n    - kube-controller-manager\n    name: kcm\n", kcmExternal, "flow-style"},
		{"flow-style volumes", podHead + "spec:\n  containers:\n  - command:\n    - kube-controller-manager\n    name: kcm\n  volumes: [{name: a, hostPath: {path: /a}}]\n", kcmLeaderMigration, "not a block sequence"},
		{"a volume of that name", podHead + "spec:\n  containers:\n  - command:\n    - kube-controller-manager\n    name: kcm\n  volumes:\n  - hostPath:\n      path: /other\n    name: awsccmctl-leader-migration\n",
			kcmLeaderMigration, "in the way"},
		{"a mount at that path", podHead + "spec:\n  containers:\n  - command:\n    - kube-controller-manager\n    name: kcm\n    volumeMounts:\n    - mountPath: /etc/kubernetes/awsccmctl/leader-migration.yaml\n      name: other\n",
			kcmLeaderMigration, "in the way"},
		{"folded script", podHead + "spec:\n  containers:\n  - command:\n    - sh\n    - -c\n    - >\n      exec kube-controller-manager --cloud-provider=aws\n    name: kcm\n", kcmExternal, "folded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := editManifest("/etc/kubernetes/manifests/m.yaml", []byte(c.in), c.edit)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "/etc/kubernetes/manifests/m.yaml") {
				t.Errorf("err = %v, want the file named and %q", err, c.want)
			}
		})
	}
}
