package main

// The hashes OpenKruise v1.8.2 writes into apps.kruise.io/runtime-containers-meta, re-implemented
// line for line (importing github.com/openkruise/kruise would pull k8s.io/kubernetes and its
// staging replaces into this module) from:
//   - github.com/openkruise/kruise@v1.8.2 pkg/util/containermeta/env_hash.go: GetExpectHash,
//     GetCurrentHash, hashEnvs (extractedEnvFromMetadataHash, manager and kruise-daemon);
//   - k8s.io/kubernetes@v1.30.10 pkg/kubelet/container/helpers.go: HashContainer (plainHash: the
//     kubelet stores it on the container, kruise-daemon copies it, the manager recomputes it);
//   - k8s.io/kubernetes@v1.30.10 pkg/fieldpath/fieldpath.go: SplitMaybeSubscriptedPath;
//   - k8s.io/kubernetes@v1.30.10 pkg/util/hash/hash.go: DeepHashObject.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash"
	"hash/fnv"
	"os"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/dump"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/sets"
)

var excludeEnvs = sets.NewString("SIDECARSET_VERSION", "SIDECARSET_VERSION_ALT")

func deepHashObject(hasher hash.Hash, objectToWrite interface{}) {
	hasher.Reset()
	fmt.Fprintf(hasher, "%v", dump.ForHash(objectToWrite))
}

func splitMaybeSubscriptedPath(fieldPath string) (string, string, bool) {
	if !strings.HasSuffix(fieldPath, "']") {
		return fieldPath, "", false
	}
	s := strings.TrimSuffix(fieldPath, "']")
	parts := strings.SplitN(s, "['", 2)
	if len(parts) < 2 {
		return fieldPath, "", false
	}
	if len(parts[0]) == 0 {
		return fieldPath, "", false
	}
	return parts[0], parts[1], true
}

func hashEnvs(envs []corev1.EnvVar) uint64 {
	h := fnv.New32a()
	envsJSON, _ := json.Marshal(envs)
	deepHashObject(h, envsJSON)
	return uint64(h.Sum32())
}

// envsFromMetadata: the container's env vars taken from metadata.labels/annotations through a
// fieldRef (excluded names skipped), valued by value(path, subscript, name), sorted by name.
func envsFromMetadata(c *corev1.Container, value func(path, subscript, name string) string) []corev1.EnvVar {
	var envs []corev1.EnvVar
	for i := range c.Env {
		if c.Env[i].Value != "" || c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.FieldRef == nil {
			continue
		} else if excludeEnvs.Has(c.Env[i].Name) {
			continue
		}
		path, subscript, ok := splitMaybeSubscriptedPath(c.Env[i].ValueFrom.FieldRef.FieldPath)
		if !ok || (path != "metadata.annotations" && path != "metadata.labels") {
			continue
		}
		envs = append(envs, corev1.EnvVar{Name: c.Env[i].Name, Value: value(path, subscript, c.Env[i].Name)})
	}
	sort.SliceStable(envs, func(i, j int) bool { return envs[i].Name < envs[j].Name })
	return envs
}

func getExpectHash(c *corev1.Container, labels, annotations map[string]string) uint64 {
	return hashEnvs(envsFromMetadata(c, func(path, subscript, _ string) string {
		if path == "metadata.labels" {
			return labels[subscript]
		}
		return annotations[subscript]
	}))
}

// getCurrentHash with the daemon's getter: the container's `env` output as a map, "" when missing.
func getCurrentHash(c *corev1.Container, runtimeEnv map[string]string) uint64 {
	return hashEnvs(envsFromMetadata(c, func(_, _, name string) string { return runtimeEnv[name] }))
}

func hashContainer(container *corev1.Container) uint64 {
	h := fnv.New32a()
	containerJSON, _ := json.Marshal(container)
	deepHashObject(h, containerJSON)
	return uint64(h.Sum32())
}

// computeEnvHashes: one JSON object of hashes per JSON line of stdin.
func computeEnvHashes() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<24), 1<<24)
	for in.Scan() {
		var c struct {
			Container   corev1.Container  `json:"container"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
			RuntimeEnv  map[string]string `json:"runtimeEnv"`
		}
		if err := utiljson.Unmarshal(in.Bytes(), &c); err != nil {
			panic(err)
		}
		out, _ := json.Marshal(map[string]uint64{
			"extractedEnvFromMetadataHash": getExpectHash(&c.Container, c.Labels, c.Annotations),
			"currentEnvHash":               getCurrentHash(&c.Container, c.RuntimeEnv),
			"plainHash":                    hashContainer(&c.Container),
		})
		fmt.Println(string(out))
	}
}
