package lb

import (
	"reflect"
	"slices"
	"testing"
)

func TestNodeGroupsFor(t *testing.T) {
	known := map[string]*group{
		"sg-tagged":   {id: "sg-tagged", tags: map[string]string{"kubernetes.io/cluster/" + testCluster: "owned"}},
		"sg-tagged2":  {id: "sg-tagged2", tags: map[string]string{"kubernetes.io/cluster/" + testCluster: "shared"}},
		"sg-legacy":   {id: "sg-legacy", tags: map[string]string{"KubernetesCluster": testCluster}},
		"sg-other":    {id: "sg-other", tags: map[string]string{"kubernetes.io/cluster/other": "owned"}},
		"sg-plain":    {id: "sg-plain", tags: map[string]string{}},
		"sg-plain2":   {id: "sg-plain2", tags: map[string]string{}},
		"sg-ssh":      {id: "sg-ssh", tags: map[string]string{"Name": "ssh"}},
		"sg-single-1": {id: "sg-single-1"},
	}
	tests := []struct {
		name    string
		targets []target
		want    []string
		// wantEvent lists what the Warning must name; nil: no event.
		wantEvent []string
	}{
		{
			name:    "tagged groups win over untagged",
			targets: []target{{InstanceID: "i-1", Node: "n1", Groups: []string{"sg-plain", "sg-tagged", "sg-ssh", "sg-tagged2"}}},
			want:    []string{"sg-tagged", "sg-tagged2"},
		},
		{
			name:    "legacy tag counts",
			targets: []target{{InstanceID: "i-1", Node: "n1", Groups: []string{"sg-plain", "sg-legacy"}}},
			want:    []string{"sg-legacy"},
		},
		{
			name:    "single untagged group used",
			targets: []target{{InstanceID: "i-1", Node: "n1", Groups: []string{"sg-single-1"}}},
			want:    []string{"sg-single-1"},
		},
		{
			name:    "single group unknown to the describe is used",
			targets: []target{{InstanceID: "i-1", Node: "n1", Groups: []string{"sg-gone"}}},
			want:    []string{"sg-gone"},
		},
		{
			name: "several untagged groups: node skipped with a Warning",
			targets: []target{
				{InstanceID: "i-1", Node: "n1", Groups: []string{"sg-tagged"}},
				{InstanceID: "i-2", Node: "node-ambiguous", Groups: []string{"sg-plain", "sg-plain2"}},
			},
			want:      []string{"sg-tagged"},
			wantEvent: []string{"Warning " + ReasonTargetSkipped, "node-ambiguous", "i-2", "sg-plain, sg-plain2", "kubernetes.io/cluster/" + testCluster},
		},
		{
			name:      "another cluster's tag does not count",
			targets:   []target{{InstanceID: "i-3", Node: "node-3", Groups: []string{"sg-other", "sg-plain"}}},
			want:      []string{},
			wantEvent: []string{"node-3"},
		},
		{
			name: "de-duplicated and sorted",
			targets: []target{
				{InstanceID: "i-1", Node: "n1", Groups: []string{"sg-tagged2"}},
				{InstanceID: "i-2", Node: "n2", Groups: []string{"sg-tagged", "sg-plain"}},
				{InstanceID: "i-3", Node: "n3", Groups: []string{"sg-tagged2", "sg-tagged"}},
				{InstanceID: "i-4", Node: "n4", Groups: []string{"sg-single-1"}},
			},
			want: []string{"sg-single-1", "sg-tagged", "sg-tagged2"},
		},
		{
			name:    "no groups at all: nothing, no event",
			targets: []target{{InstanceID: "i-1", Node: "n1"}},
			want:    []string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, rec := newTestReconciler(Config{})
			got := r.nodeGroupsFor(testService(nil), tc.targets, known)
			if !slices.Equal(got, tc.want) {
				t.Errorf("nodeGroupsFor = %v, want %v", got, tc.want)
			}
			if tc.wantEvent == nil {
				if ev := events(rec); len(ev) > 0 {
					t.Errorf("unexpected events %q", ev)
				}
				return
			}
			wantOneEvent(t, rec, "Warning "+ReasonTargetSkipped, tc.wantEvent...)
		})
	}
}

func TestWithMTU(t *testing.T) {
	const me, them = "kubernetes.io/rule/nlb/client=mine", "kubernetes.io/rule/nlb/client=theirs"
	owns := func(x rule) bool { return x.Desc == me || x.Desc == "kubernetes.io/rule/nlb/health=mine" }
	client := func(cidr, desc string) rule {
		return rule{Protocol: "tcp", From: 30080, To: 30080, CIDR: cidr, Desc: desc}
	}
	mtu := func(cidr string) rule {
		return rule{Protocol: "icmp", From: 3, To: 4, CIDR: cidr, Desc: nlbMTURuleDesc}
	}

	have := []rule{
		client("10.0.0.0/8", them),                                          // another NLB keeps its clients: MTU stays
		client("192.168.0.0/16", me),                                        // this NLB's old client range: replaced, MTU goes
		{Protocol: "tcp", From: 30080, To: 30080, IPv6: "::/0", Desc: them}, // IPv6: no ICMP rule
		{Protocol: "tcp", From: 30081, To: 30081, CIDR: "10.1.0.0/16", Desc: "kubernetes.io/rule/nlb/health=theirs"},
		mtu("10.0.0.0/8"),
		mtu("192.168.0.0/16"),
		{Protocol: "tcp", From: 22, To: 22, CIDR: "0.0.0.0/0", Desc: "ssh"},
	}
	want := []rule{client("203.0.113.0/24", me), client("10.0.0.0/8", me), {Protocol: "tcp", From: 30081, To: 30081, CIDR: "10.2.0.0/16", Desc: "kubernetes.io/rule/nlb/health=mine"}}

	got, gotOwns := withMTU(have, want, owns)
	wantOut := append(slices.Clone(want), mtu("10.0.0.0/8"), mtu("203.0.113.0/24"))
	if !reflect.DeepEqual(got, wantOut) {
		t.Errorf("withMTU want = %+v\nwant %+v", got, wantOut)
	}
	for _, tc := range []struct {
		r    rule
		owns bool
	}{
		{mtu("1.2.3.4/32"), true},
		{client("1.2.3.4/32", me), true},
		{client("1.2.3.4/32", them), false},
		{rule{Protocol: "icmp", From: 3, To: 4, CIDR: "1.2.3.4/32", Desc: "kubernetes.io/rule/nlb/mtu=x"}, false},
		{rule{Protocol: "tcp", From: 22, To: 22, CIDR: "0.0.0.0/0", Desc: "ssh"}, false},
	} {
		if o := gotOwns(tc.r); o != tc.owns {
			t.Errorf("owns(%+v) = %t, want %t", tc.r, o, tc.owns)
		}
	}

	// Through the diff: the stale range's MTU rule goes, the other NLB's stays.
	add, remove := diffRules(have, got, gotOwns)
	// 10.0.0.0/8 on the port is already there under the other NLB's
	// description: present, not added.
	wantAdd := []rule{mtu("203.0.113.0/24"), {Protocol: "tcp", From: 30081, To: 30081, CIDR: "10.2.0.0/16", Desc: "kubernetes.io/rule/nlb/health=mine"}, client("203.0.113.0/24", me)}
	wantRemove := []rule{mtu("192.168.0.0/16"), client("192.168.0.0/16", me)}
	sortRules(wantAdd)
	if !reflect.DeepEqual(add, wantAdd) {
		t.Errorf("add = %+v\nwant %+v", add, wantAdd)
	}
	if !reflect.DeepEqual(remove, wantRemove) {
		t.Errorf("remove = %+v\nwant %+v", remove, wantRemove)
	}
}

func TestWithMTUNoClients(t *testing.T) {
	// This NLB's rules go from a group no NLB uses any more: so do the
	// MTU rules.
	owns := func(x rule) bool { return x.Desc == "kubernetes.io/rule/nlb/client=mine" }
	have := []rule{
		{Protocol: "tcp", From: 30080, To: 30080, CIDR: "0.0.0.0/0", Desc: "kubernetes.io/rule/nlb/client=mine"},
		{Protocol: "icmp", From: 3, To: 4, CIDR: "0.0.0.0/0", Desc: nlbMTURuleDesc},
	}
	want, o := withMTU(have, nil, owns)
	if len(want) != 0 {
		t.Errorf("want = %+v, want none", want)
	}
	add, remove := diffRules(have, want, o)
	if len(add) != 0 || !reflect.DeepEqual(remove, []rule{have[1], have[0]}) {
		t.Errorf("add %+v remove %+v; want both rules removed", add, remove)
	}
}
