// The field-tree walker both kubeadm tool modules (hack/tools/k8s and
// hack/tools/kubeadm135) run over kubeadm's Go types; standard library
// only, so each tool module takes it with a replace and no other change.
module github.com/awsccmctl/awsccmctl/hack/tools/fieldschema

go 1.25.0
