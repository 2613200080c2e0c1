package cloudconfig

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/mdfence"
)

// TestDocsExamplesLoad loads every ```ini block of docs/cloud-config.md, so
// the documented examples cannot rot.
func TestDocsExamplesLoad(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "cloud-config.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks := mdfence.Blocks(string(data), "ini")
	if len(blocks) < 3 {
		t.Fatalf("%s has %d ```ini examples, want at least 3", path, len(blocks))
	}
	for _, b := range blocks {
		t.Run("line-"+strconv.Itoa(b.Line), func(t *testing.T) {
			if _, err := load([]byte(b.Text)); err != nil {
				t.Errorf("example at %s:%d does not load: %v\n%s", path, b.Line, err, b.Text)
			}
		})
	}
}

// TestDocsErrorMessages checks that the messages quoted under "Errors you may
// see" in docs/cloud-config.md are what the package prints for the inputs
// below.
func TestDocsErrorMessages(t *testing.T) {
	inputs := []string{
		"[Global]\nRegoin = us-east-1\n",
		"[Kubernetes]\nx = 1\n",
		"[Global]\nDisableSecurityGroupIngress = maybe\n",
		"[Global]\nRegion = \"us-east-1\n",
		"[Global]\nZone = us-west-2a\nRegion = us-east-1\nKubernetesClusterTag = a\nKubernetesClusterID = b\nRoleARN = arn:aws:iam::123456789012:user/ccm\n" +
			"[ServiceOverride \"1\"]\nService = s3\nRegion = us-east-1\nURL = https://s3.example\nSigningRegion = us-east-1\n",
		"[Global]\nDisableSecurityGroupIngress = maybe\nRegoin = us-east-1\nVPC = 0123456789abcdef0\n[Kubernetes]\nx = 1\n",
		"[Global]\nRegion = us-east-1\n" +
			"[ServiceOverride \"a\"]\nService = EC2\nRegion = us-east-1\nURL = https://a\nSigningRegion = us-east-1\n" +
			"[ServiceOverride \"b\"]\nService = ec2\nRegion = us-east-1\nURL = https://b\nSigningRegion = us-east-1\n",
	}
	var actual strings.Builder
	for _, in := range inputs {
		_, err := load([]byte(in))
		if err == nil {
			t.Fatalf("input loads, want an error:\n%s", in)
		}
		actual.WriteString(err.Error() + "\n")
	}

	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "cloud-config.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "## Errors you may see")
	if start < 0 {
		t.Fatal(`docs/cloud-config.md has no "## Errors you may see" section`)
	}
	checked := 0
	inText := false
	for _, line := range strings.Split(doc[start:], "\n") {
		switch trimmed := strings.TrimSpace(line); {
		case trimmed == "```text":
			inText = true
		case trimmed == "```":
			inText = false
		case inText && trimmed != "":
			checked++
			if !strings.Contains(actual.String(), line) {
				t.Errorf("documented message is not printed for any input:\n%s", line)
			}
		}
	}
	if checked == 0 {
		t.Error("no ```text messages found under Errors you may see")
	}
}
