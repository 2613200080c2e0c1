package testbed

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// ReadAuditLog returns the events of the JSON-lines audit log at path
// (ControlPlane.AuditLogPath, with Options.AuditPolicy set). The apiserver
// writes it in blocking mode, so an event is in the file before the
// request's response is sent.
func ReadAuditLog(path string) ([]auditv1.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var events []auditv1.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		var e auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		events = append(events, e)
	}
	return events, sc.Err()
}
