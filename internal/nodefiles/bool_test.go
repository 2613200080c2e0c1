package nodefiles

import "testing"

// TestFlagsBool pins the boolean rule shared by preflight and the
// migration's gates: pflag's, that is strconv.ParseBool.
func TestFlagsBool(t *testing.T) {
	cases := []struct {
		name    string
		argv    []string
		def     bool
		want    bool
		wantErr bool
	}{
		{name: "absent gives the default true", argv: []string{"kcm"}, def: true, want: true},
		{name: "absent gives the default false", argv: []string{"kcm"}, def: false, want: false},
		{name: "alone is true", argv: []string{"kcm", "--enable-leader-migration"}, want: true},
		{name: "true", argv: []string{"kcm", "--enable-leader-migration=true"}, want: true},
		{name: "True", argv: []string{"kcm", "--enable-leader-migration=True"}, want: true},
		{name: "TRUE", argv: []string{"kcm", "--enable-leader-migration=TRUE"}, want: true},
		{name: "1", argv: []string{"kcm", "--enable-leader-migration=1"}, want: true},
		{name: "t", argv: []string{"kcm", "--enable-leader-migration=t"}, want: true},
		{name: "T", argv: []string{"kcm", "--enable-leader-migration=T"}, want: true},
		{name: "separate value", argv: []string{"kcm", "--enable-leader-migration", "true"}, want: true},
		{name: "underscore spelling", argv: []string{"kcm", "--enable_leader_migration=1"}, want: true},
		{name: "false", argv: []string{"kcm", "--enable-leader-migration=false"}, def: true, want: false},
		{name: "False", argv: []string{"kcm", "--enable-leader-migration=False"}, def: true, want: false},
		{name: "0", argv: []string{"kcm", "--enable-leader-migration=0"}, def: true, want: false},
		{name: "f", argv: []string{"kcm", "--enable-leader-migration=f"}, def: true, want: false},
		{name: "the last occurrence wins", argv: []string{"kcm", "--enable-leader-migration=true", "--enable-leader-migration=false"}, want: false},
		{name: "empty is refused", argv: []string{"kcm", "--enable-leader-migration="}, wantErr: true},
		{name: "yes is refused", argv: []string{"kcm", "--enable-leader-migration=yes"}, wantErr: true},
		{name: "on is refused", argv: []string{"kcm", "--enable-leader-migration=on"}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseFlags(tc.argv).Bool("enable-leader-migration", tc.def)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Bool: err = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Errorf("Bool = %v, want %v", got, tc.want)
			}
		})
	}
}
