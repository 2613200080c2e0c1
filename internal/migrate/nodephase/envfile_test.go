package nodephase

import (
	"strings"
	"testing"
)

func TestEditEnvVar(t *testing.T) {
	external := []flagOp{setFlag("cloud-provider", "external"), removeFlag("cloud-config")}
	cases := []struct {
		name, in, variable string
		ops                []flagOp
		want               string
	}{
		{"double quotes", "KUBELET_KUBEADM_ARGS=\"--cloud-provider=aws --x=1\"\n", "KUBELET_KUBEADM_ARGS", external,
			"KUBELET_KUBEADM_ARGS=\"--cloud-provider=external --x=1\"\n"},
		{"single quotes", "DAEMON_ARGS='--a=1 --cloud-config=/c --cloud-provider=aws'\nHOME=/root\n", "DAEMON_ARGS", external,
			"DAEMON_ARGS='--a=1 --cloud-provider=external'\nHOME=/root\n"},
		{"unquoted", "# comment\nKUBELET_EXTRA_ARGS=--cloud-config=/c --node-labels=a=b\n", "KUBELET_EXTRA_ARGS", external,
			"# comment\nKUBELET_EXTRA_ARGS=--cloud-provider=external --node-labels=a=b\n"},
		{"empty unquoted value", "KUBELET_EXTRA_ARGS=\n", "KUBELET_EXTRA_ARGS", external,
			"KUBELET_EXTRA_ARGS=--cloud-provider=external\n"},
		{"empty quoted value", "KUBELET_EXTRA_ARGS=\"\"\n", "KUBELET_EXTRA_ARGS", external,
			"KUBELET_EXTRA_ARGS=\"--cloud-provider=external\"\n"},
		{"no final newline", "A=1\nDAEMON_ARGS=\"--v=2\"", "DAEMON_ARGS", external,
			"A=1\nDAEMON_ARGS=\"--cloud-provider=external --v=2\""},
		{"blanks kept between other words", "X=\"--a=1   --cloud-config=/c\t--b=2  \"\n", "X", external,
			"X=\"--a=1\t--b=2 --cloud-provider=external  \"\n"},
		{"the last assignment is the one used", "X=\"--cloud-provider=aws\"\nX=\"--cloud-provider=gce\"\n", "X", external,
			"X=\"--cloud-provider=aws\"\nX=\"--cloud-provider=external\"\n"},
		{"other variables untouched", "A=\"--cloud-provider=aws\"\nX=\"--v=2\"\n", "X", []flagOp{removeFlag("cloud-provider")},
			"A=\"--cloud-provider=aws\"\nX=\"--v=2\"\n"},
		{"CRLF", "X=\"--cloud-provider=aws\"\r\nY=1\r\n", "X", external,
			"X=\"--cloud-provider=external\"\r\nY=1\r\n"},
		{"blanks around the value", "X= \"--cloud-config=/c\" \n", "X", external,
			"X= \"--cloud-provider=external\" \n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := editEnvVar(c.in, c.variable, c.ops)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestEditEnvVarRefuses(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"missing variable", "Y=1\n", "no X= line"},
		{"quotes inside", "X=\"--a='b c'\"\n", "quotes"},
		{"escapes inside", "X=\"--a=\\\"b\\\"\"\n", "quotes"},
		{"two quoted strings", "X=\"--a\" \"--b\"\n", "quotes"},
		{"line continuation", "X=--a \\\n--b\n", "backslashes"},
		{"unterminated quote", "X=\"--a\n", "not one quoted string"},
		{"value across lines", "X=\"--a\n--b\"\n", "line breaks"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := editEnvVar(c.in, "X", []flagOp{setFlag("cloud-provider", "external")})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}
