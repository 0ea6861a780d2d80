// Command apicheck runs the API server's own validation code on our generated CRDs and on
// updates of AIM objects, offline.
//
// `crossplane resource validate` checks a single object, so it cannot evaluate CEL transition
// rules (those that read oldSelf, such as immutability), and it does not run the checks the API
// server applies when a CRD is created (structural schema, CEL compilation and cost budgets).
// This command does both with k8s.io/apiextensions-apiserver, the code kube-apiserver runs.
//
//	apicheck CRD.yaml...  < cases.json  > results.json
//
// Every CRD given is validated first; problems are printed and the exit status is 1. Then each
// case {"name", "old", "new"} on stdin is validated as an update of old to new, after the
// structural defaulting the API server applies, and {"name", "errors"} is written per case.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

type kindSchema struct {
	validator  validation.SchemaValidator
	structural *schema.Structural
}

type updateCase struct {
	Name string                 `json:"name"`
	Old  map[string]interface{} `json:"old"`
	New  map[string]interface{} `json:"new"`
}

type result struct {
	Name   string   `json:"name"`
	Errors []string `json:"errors"`
}

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "apicheck:", err)
		os.Exit(1)
	}
}

func run(crdFiles []string, in io.Reader, out io.Writer) error {
	ctx := context.Background()
	schemas := map[string]kindSchema{}
	for _, path := range crdFiles {
		crds, err := readCRDs(path)
		if err != nil {
			return err
		}
		for _, crd := range crds {
			if errs := crdvalidation.ValidateCustomResourceDefinition(ctx, crd); len(errs) > 0 {
				return fmt.Errorf("%s: the API server would refuse CRD %s: %v", path, crd.Name, errs.ToAggregate())
			}
			for _, v := range crd.Spec.Versions {
				// The internal type hoists a schema shared by every version to spec.validation.
				validationSpec := crd.Spec.Validation
				if v.Schema != nil {
					validationSpec = v.Schema
				}
				if validationSpec == nil || validationSpec.OpenAPIV3Schema == nil {
					return fmt.Errorf("%s: version %s has no schema", crd.Name, v.Name)
				}
				props := validationSpec.OpenAPIV3Schema
				sv, _, err := validation.NewSchemaValidator(props)
				if err != nil {
					return fmt.Errorf("%s: %w", crd.Name, err)
				}
				st, err := schema.NewStructural(props)
				if err != nil {
					return fmt.Errorf("%s: %w", crd.Name, err)
				}
				schemas[crd.Spec.Group+"/"+v.Name+"/"+crd.Spec.Names.Kind] = kindSchema{sv, st}
			}
		}
	}

	var cases []updateCase
	if err := json.NewDecoder(in).Decode(&cases); err != nil && err != io.EOF {
		return fmt.Errorf("reading cases: %w", err)
	}
	results := make([]result, 0, len(cases))
	for _, c := range cases {
		results = append(results, result{Name: c.Name, Errors: validateUpdate(ctx, schemas, c)})
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(results)
}

func validateUpdate(ctx context.Context, schemas map[string]kindSchema, c updateCase) []string {
	newObj := &unstructured.Unstructured{Object: c.New}
	oldObj := &unstructured.Unstructured{Object: c.Old}
	gvk := newObj.GroupVersionKind()
	ks, ok := schemas[gvk.Group+"/"+gvk.Version+"/"+gvk.Kind]
	if !ok {
		return []string{"no schema for " + gvk.String()}
	}
	// The API server defaults both objects before it validates (old ones when read from etcd).
	defaulting.Default(newObj.Object, ks.structural)
	defaulting.Default(oldObj.Object, ks.structural)

	errs := validation.ValidateCustomResourceUpdate(nil, newObj.UnstructuredContent(), oldObj.UnstructuredContent(), ks.validator)
	celErrs, _ := cel.NewValidator(ks.structural, true, celconfig.PerCallLimit).
		Validate(ctx, nil, ks.structural, newObj.Object, oldObj.Object, celconfig.RuntimeCELCostBudget)
	errs = append(errs, celErrs...)
	messages := make([]string, 0, len(errs))
	for _, e := range errs {
		messages = append(messages, e.Error())
	}
	return messages
}

func readCRDs(path string) ([]*apiextensions.CustomResourceDefinition, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var crds []*apiextensions.CustomResourceDefinition
	for {
		doc, err := reader.Read()
		if err == io.EOF {
			return crds, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		v1 := &extv1.CustomResourceDefinition{}
		if err := utilyaml.Unmarshal(doc, v1); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if v1.Kind != "CustomResourceDefinition" {
			continue
		}
		// `crossplane xrd convert` names the XRD as owner with an empty UID; in a cluster,
		// Crossplane sets the XRD's real UID. Ownership is not what we are checking.
		v1.OwnerReferences = nil
		extv1.SetObjectDefaults_CustomResourceDefinition(v1)
		internal := &apiextensions.CustomResourceDefinition{}
		if err := extv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(v1, internal, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		crds = append(crds, internal)
	}
}
