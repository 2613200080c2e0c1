package install

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// FuzzRenderQuotesValues: whatever a free-text value holds, the rendering is
// either refused by Validate or decodes to exactly that value; no value can
// change the YAML's structure.
func FuzzRenderQuotesValues(f *testing.F) {
	for _, s := range []string{"prod", "a: b", "\"quoted\"\n- x", "true", "1e3", "#comment", "{a: [b]}", "x\u2028y", "'", "\\", "\t"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, clusterName, extra string) {
		v := Values{Image: testImage, ClusterName: clusterName, ExtraArgs: map[string]string{"node-monitor-period": extra}}
		v.Default()
		if v.Validate() != nil {
			return
		}
		objs, err := RenderObjects(v)
		if err != nil {
			t.Fatalf("valid values do not render: %v", err)
		}
		obj, _, err := strictDecoder.Decode(objs[len(objs)-1].YAML, nil, nil)
		if err != nil {
			t.Fatalf("rendering does not decode: %v\n%s", err, objs[len(objs)-1].YAML)
		}
		args := obj.(*appsv1.DaemonSet).Spec.Template.Spec.Containers[0].Args
		want := v.args()
		if len(args) != len(want) {
			t.Fatalf("args %q, want %q", args, want)
		}
		for i := range want {
			if args[i] != want[i] {
				t.Fatalf("arg %d = %q, want %q", i, args[i], want[i])
			}
		}
	})
}
