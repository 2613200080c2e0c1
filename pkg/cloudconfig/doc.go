// Package cloudconfig reads, defaults, validates and writes the AWS cloud
// provider's INI cloud-config file (the file behind --cloud-config).
//
// The file format is a wire contract shared with the upstream
// kubernetes/cloud-provider-aws CCM and the in-tree (Kubernetes <= 1.26) AWS
// provider: both read it with gopkg.in/gcfg.v1, and so does this package, so
// syntax, quoting, case-insensitive names and repeated keys (lists) behave the
// same. The following MUST NOT change:
//
//   - the section names [Global] and [ServiceOverride "<name>"];
//   - every key name in [Global] (the fields of Global) and in a
//     ServiceOverride section (the fields of ServiceOverride), including the
//     in-tree key DisableStrictZoneCheck that only exists so migrated files
//     still load;
//   - the meaning of ServiceOverride's Service values: the SDK v2 service IDs
//     upstream matches ("EC2", "Elastic Load Balancing", ...), and the SDK v1
//     endpoint IDs the in-tree provider matched ("ec2", "elasticloadbalancing",
//     ...), see CanonicalService;
//   - the defaults filled by Default.
//
// Decoding is strict, as the in-tree provider's was (upstream ignores unknown
// keys): an unknown key or section is an error that lists the known ones, and
// every problem is reported at once, also those after a value that does not
// parse (gcfg stops there; Parse reads on).
// Decoding (Parse), defaulting (Config.Default) and validation
// (Config.Validate) are separate steps; Load runs all three. Render writes a
// Config back in the same format, so the installer renders the ConfigMap with
// the same code the CCM reads it with.
package cloudconfig
