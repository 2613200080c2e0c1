package routes

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestParseClusterCIDRs(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
		wantErr  string
	}{
		{name: "empty", in: " "},
		{name: "one", in: "10.244.0.0/16", want: []string{"10.244.0.0/16"}},
		{name: "host bits masked", in: "10.244.1.7/16", want: []string{"10.244.0.0/16"}},
		{name: "dual stack", in: "10.244.0.0/16, fd00:10:244::/56", want: []string{"10.244.0.0/16", "fd00:10:244::/56"}},
		{name: "not a CIDR", in: "10.244.0.0", wantErr: `"10.244.0.0" is not a CIDR`},
		{name: "same family twice", in: "10.244.0.0/16,10.245.0.0/16", wantErr: "different families"},
		{name: "three", in: "10.244.0.0/16,fd00::/56,10.1.0.0/16", wantErr: "at most two"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseClusterCIDRs(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--cluster-cidr") {
					t.Fatalf("err = %v, want one naming --cluster-cidr and saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, p := range got {
				s = append(s, p.String())
			}
			if !slices.Equal(s, tc.want) {
				t.Errorf("got %v, want %v", s, tc.want)
			}
		})
	}
}

func FuzzParseClusterCIDRs(f *testing.F) {
	for _, s := range []string{"", "10.244.0.0/16", "10.244.0.0/16,fd00::/56", "x", "1.2.3.4/33", ",", "::/0,0.0.0.0/0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseClusterCIDRs(s)
		if err != nil {
			if !strings.Contains(err.Error(), "--cluster-cidr") {
				t.Errorf("error %q does not name the flag", err)
			}
			return
		}
		if len(got) > 2 || (len(got) == 2 && got[0].Addr().Is4() == got[1].Addr().Is4()) {
			t.Errorf("accepted %q as %v", s, got)
		}
		for _, p := range got {
			if p != p.Masked() || !p.IsValid() {
				t.Errorf("%q gave %v, not a masked prefix", s, p)
			}
		}
	})
}

func TestInClusterCIDRs(t *testing.T) {
	m := New(Config{ClusterCIDRs: []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16"), netip.MustParsePrefix("fd00:10:244::/56")}})
	for in, want := range map[string]bool{
		"10.244.3.0/24": true, "10.244.0.0/16": true, "10.0.0.0/8": false, "10.245.0.0/24": false,
		"fd00:10:244:3::/64": true, "fd00:10:245::/64": false, "::/0": false, "::ffff:10.244.1.0/120": false,
	} {
		if got := m.inClusterCIDRs(netip.MustParsePrefix(in)); got != want {
			t.Errorf("inClusterCIDRs(%s) = %v, want %v", in, got, want)
		}
	}
}
