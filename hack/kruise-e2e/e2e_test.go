// Package kruisee2e runs OpenKruise's own e2e suite (github.com/openkruise/kruise/test/e2e) against
// whatever kruise-manager serves the cluster in $KUBECONFIG. Test-only: never product code.
//
// Upstream's TestE2E registers no reporter, so Ginkgo v1's -ginkgo.reportFile flag (a JUnit file)
// would be ignored; this entry point calls ginkgo.RunSpecs, which honours it. Everything else
// (flags, embedded manifests, the specs themselves) is upstream's, imported unchanged.
package kruisee2e

import (
	"flag"
	"os"
	"testing"

	"github.com/onsi/ginkgo"
	"github.com/onsi/ginkgo/config"
	"github.com/onsi/gomega"
	kruiseapis "github.com/openkruise/kruise/apis"
	_ "github.com/openkruise/kruise/test/e2e" // suite-wide Before/AfterSuite
	_ "github.com/openkruise/kruise/test/e2e/apps"
	"github.com/openkruise/kruise/test/e2e/framework"
	"github.com/openkruise/kruise/test/e2e/framework/testfiles"
	_ "github.com/openkruise/kruise/test/e2e/policy"
	e2etestingmanifests "github.com/openkruise/kruise/test/e2e/testing-manifests"
	runtimeutils "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

func TestMain(m *testing.M) {
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	flag.Parse()
	testfiles.AddFileSource(e2etestingmanifests.GetE2ETestingManifestsFS())
	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

func TestE2E(t *testing.T) {
	runtimeutils.Must(kruiseapis.AddToScheme(scheme.Scheme))
	runtimeutils.ReallyCrash = true
	gomega.RegisterFailHandler(ginkgo.Fail)
	// Upstream's default when no focus or skip is given.
	if len(config.GinkgoConfig.FocusStrings) == 0 && len(config.GinkgoConfig.SkipStrings) == 0 {
		config.GinkgoConfig.SkipStrings = []string{`\[Flaky\]|\[Feature:.+\]`}
	}
	ginkgo.RunSpecs(t, "Kruise e2e suite")
}
