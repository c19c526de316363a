// Wrapper module: prints, as JSON, how the API server writes as JSON the Kubernetes types that
// Kruise TS reads as protobuf (src/runtime/protobuf/), as reflection sees them in k8s.io/api and
// k8s.io/apimachinery at the version of the local control plane. generated.proto says how a type
// is laid out on the wire; only the Go struct tags say which of its fields JSON leaves out when
// empty (omitempty, omitzero) and which it writes inline in their parent. For every proto message
// reachable from the roots: its fields in Go declaration order (the order JSON writes them), each
// with its proto number, its JSON key ("" = inline), its options and whether the Go field is a
// pointer, slice or map (absent on the wire: nil). Types with their own JSON encoding (Time,
// Quantity, IntOrString …) are listed by name and not walked.
// Run by hack/gen-protobuf.sh; not product code.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// field: [number, json key, flags]; flags: o omitempty, z omitzero, n nil-able (pointer, slice, map).
type field [3]any

var (
	messages = map[string][]field{}
	custom   = map[string]bool{}
)

var marshaler = reflect.TypeFor[json.Marshaler]()

// protoName: the proto message of a Go type (go-to-protobuf names the package after its import path).
func protoName(t reflect.Type) string {
	return strings.ReplaceAll(t.PkgPath(), "/", ".") + "." + t.Name()
}

func walk(t reflect.Type) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		if t.Kind() == reflect.Map {
			walk(t.Key())
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	name := protoName(t)
	if t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
		custom[name] = true
		return
	}
	if _, seen := messages[name]; seen {
		return
	}
	messages[name] = nil
	var fields []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("protobuf")
		if !ok {
			continue // TypeMeta: carried by runtime.Unknown, not by the message
		}
		parts := strings.Split(tag, ",")
		number, err := strconv.Atoi(parts[1])
		if err != nil {
			panic(fmt.Sprintf("%s.%s: protobuf tag %q", name, f.Name, tag))
		}
		jsonTag := strings.Split(f.Tag.Get("json"), ",")
		key := jsonTag[0]
		if key == "-" {
			panic(fmt.Sprintf("%s.%s: not written as JSON", name, f.Name))
		}
		flags := ""
		for _, opt := range jsonTag[1:] {
			switch opt {
			case "omitempty":
				flags += "o"
			case "omitzero":
				flags += "z"
			case "inline":
				key = ""
			}
		}
		if k := f.Type.Kind(); k == reflect.Pointer || k == reflect.Slice || k == reflect.Map {
			flags += "n"
		}
		if f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Uint8 {
			flags += "b" // []byte: bytes on the wire, base64 in JSON
		}
		fields = append(fields, field{number, key, flags})
		walk(f.Type)
	}
	messages[name] = fields
}

func main() {
	for _, root := range []any{corev1.Pod{}, corev1.PodList{}, corev1.Node{}, corev1.NodeList{}, metav1.Status{}} {
		walk(reflect.TypeOf(root))
	}
	names := make([]string, 0, len(custom))
	for n := range custom {
		names = append(names, n)
	}
	sort.Strings(names)
	out, err := json.Marshal(map[string]any{"messages": messages, "custom": names})
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(append(out, '\n'))
}
