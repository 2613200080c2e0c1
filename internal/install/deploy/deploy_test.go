package deploy

import (
	"errors"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
)

func TestReportSummary(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Report
		want string
	}{
		{"valid-empty", Report{}, ""},
		{"valid-in-order-of-first-action", Report{Objects: []apply.Result{
			{Ref: "a", Action: "unchanged"}, {Ref: "b", Action: "created"}, {Ref: "c", Action: "unchanged"}}}, "2 unchanged, 1 created"},
		{"valid-dry-run", Report{DryRun: apply.DryRunServer, Objects: []apply.Result{{Ref: "a", Action: "configured"}}}, "1 configured (dry run: server)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Summary(); got != tc.want {
				t.Errorf("Summary() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestObjects(t *testing.T) {
	v := install.Values{}
	v.Default()
	objs, err := Objects(v)
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := install.RenderObjects(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != len(rendered) {
		t.Fatalf("%d objects, want %d", len(objs), len(rendered))
	}
	for i, o := range objs {
		if o.GetKind() != rendered[i].Kind || o.GetName() != rendered[i].Name {
			t.Errorf("object %d is %s %s, want %s %s", i, o.GetKind(), o.GetName(), rendered[i].Kind, rendered[i].Name)
		}
	}

	// Values that do not render are a RenderError.
	v.ExtraArgs = map[string]string{"v": "\xff"}
	_, err = Objects(v)
	if re := (*RenderError)(nil); !errors.As(err, &re) {
		t.Errorf("error %T %v, want *RenderError", err, err)
	}
}
