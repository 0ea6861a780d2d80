// Command aim stands in for an AIM image's entrypoint in the end-to-end tier's node.
//
//	aim dry-run --format=json   prints the image's profiles, as discovery Jobs run it
//	aim [serve --port=N]        an OpenAI-compatible endpoint answering every request the same way
//	                            (port 8000 without arguments: an InferenceService runs the image's
//	                            entrypoint as it is, as real AIM images serve by default)
//
// The dry-run prints the profile in the schema $AIM_STUB_SCHEMA names: `gpu` (the default) as
// AIM images up to 0.10 do (metadata.gpu, gpu_count), or `accelerator` as newer ones do
// (metadata.accelerator_model, accelerator_count, accelerator_type and the runtime's other
// fields). A newer image reads only AIM_ACCELERATOR_MODEL and AIM_ACCELERATOR_COUNT here, and
// with no GPU to detect finds no profile without them. No profile is what AIM's runtime says
// it: `[]` on stdout and exit code 0, the reason on stderr.
//
// Serving fails on demand, as a broken inference server would, for the tests of what a service
// reports about its pods: $AIM_STUB_EXIT is printed and the server exits with code 3 (a crash
// loop); $AIM_STUB_ALLOCATE_MIB mebibytes are touched before serving (killed under a lower
// memory limit).
//
// Adapters: $AIM_ADAPTER_SOURCE (the AIM runtime's contract; /adapters as an InferenceService
// mounts a service's adapter disk) is read at every `GET /v1/models`, and each directory in it
// is listed as a model whose parent is the base model, as vLLM lists the LoRA adapters it serves:
// a dynamic service's adapters come and go there without a restart.
//
// Real AIM images carry a GPU inference server; none can run without AMD GPUs, so the tests put
// this program in a small Debian image (devtools/cluster/aimimage.py) with the AIM labels instead.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// The profile a one-GPU MI300X image recommends: what discovery must turn into a template's
// status.
const profiles = `[{"filename": "vllm-mi300x-fp8-tp1-latency.yaml",
 "profile": {"metadata": {"engine": "vllm", "gpu": "MI300X", "gpu_count": 1, "metric": "latency",
   "precision": "fp8", "type": "optimized"},
  "engine_args": {"tensor-parallel-size": 1}, "env_vars": {"VLLM_USE_V1": "1"}},
 "models": [{"name": "Org/Small", "source": "hf://Org/Small", "size_gb": 0.5}]}]`

func main() {
	if len(os.Args) < 2 {
		serve(8000)
		return
	}
	switch os.Args[1] {
	case "dry-run":
		flags := flag.NewFlagSet("dry-run", flag.ExitOnError)
		format := flags.String("format", "text", "output format")
		_ = flags.Parse(os.Args[2:])
		if *format != "json" {
			fmt.Fprintln(os.Stderr, "only --format=json is supported")
			os.Exit(2)
		}
		out, err := dryRun(os.Getenv("AIM_STUB_SCHEMA"))
		var none noProfile
		if errors.As(err, &none) {
			fmt.Fprintln(os.Stderr, none)
			fmt.Print("[]")
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Print(out)
	case "serve":
		flags := flag.NewFlagSet("serve", flag.ExitOnError)
		port := flags.Int("port", 8000, "port to listen on")
		_ = flags.Parse(os.Args[2:])
		serve(*port)
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
}

// noProfile is a dry-run's answer that none of the image's profiles fits its inputs.
type noProfile string

func (n noProfile) Error() string { return string(n) }

// dryRun is what `dry-run --format=json` prints in the schema named (see the package comment).
func dryRun(schema string) (string, error) {
	switch schema {
	case "", "gpu":
		return profiles, nil
	case "accelerator":
	default:
		return "", fmt.Errorf("AIM_STUB_SCHEMA is %q, not gpu or accelerator", schema)
	}
	model := os.Getenv("AIM_ACCELERATOR_MODEL")
	if model == "" {
		return "", noProfile("no accelerator detected and AIM_ACCELERATOR_MODEL is unset")
	}
	if !strings.EqualFold(model, "MI300X") {
		return "", noProfile("no profile for AIM_ACCELERATOR_MODEL=" + model + " (this image has MI300X)")
	}
	if count := os.Getenv("AIM_ACCELERATOR_COUNT"); count != "" && count != "1" {
		return "", noProfile("no profile for AIM_ACCELERATOR_COUNT=" + count + " (this image has 1)")
	}
	var result []map[string]any
	if err := json.Unmarshal([]byte(profiles), &result); err != nil {
		return "", err
	}
	profile := result[0]["profile"].(map[string]any)
	metadata := profile["metadata"].(map[string]any)
	delete(metadata, "gpu")
	delete(metadata, "gpu_count")
	metadata["accelerator_type"] = "gpu"
	metadata["accelerator_model"] = "MI300X"
	metadata["accelerator_count"] = 1
	metadata["manual_selection_only"] = false
	metadata["features"] = []string{}
	out, err := json.Marshal(result)
	return string(out), err
}

func serve(port int) {
	if said := os.Getenv("AIM_STUB_EXIT"); said != "" {
		fmt.Fprintln(os.Stderr, said)
		os.Exit(3)
	}
	var held []byte
	if mib, err := strconv.Atoi(os.Getenv("AIM_STUB_ALLOCATE_MIB")); err == nil && mib > 0 {
		held = make([]byte, mib<<20)
		for i := range held {
			held[i] = byte(i)
		}
	}
	defer func() { _ = held }()
	reply := func(w http.ResponseWriter, body any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		reply(w, map[string]any{"object": "list", "data": models(os.Getenv("AIM_ADAPTER_SOURCE"))})
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, _ *http.Request) {
		reply(w, map[string]any{
			"object":  "chat.completion",
			"model":   "Org/Small",
			"created": time.Now().Unix(),
			"choices": []any{map[string]any{
				"index":         0,
				"finish_reason": "stop",
				"message":       map[string]any{"role": "assistant", "content": "a stand-in answer"},
			}},
		})
	})
	server := &http.Server{Addr: fmt.Sprintf(":%d", port), Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := server.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// maxAdapters bounds the listing as the runtime's AIM_ADAPTER_MAX_COUNT would.
const maxAdapters = 64

// models is the base model, then each adapter directory under source (none when it is unset or
// unreadable), by name.
func models(source string) []any {
	out := []any{map[string]any{"id": "Org/Small", "object": "model"}}
	if source == "" {
		return out
	}
	entries, err := os.ReadDir(source)
	if err != nil {
		return out
	}
	for _, entry := range entries {
		if len(out) > maxAdapters {
			break
		}
		if entry.IsDir() {
			out = append(out, map[string]any{
				"id":     entry.Name(),
				"object": "model",
				"parent": "Org/Small",
				"root":   source + "/" + entry.Name(),
			})
		}
	}
	return out
}
