{
  "target_defaults": {
    "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
    "cflags_cc": ["-std=gnu++17", "-O2", "-fexceptions", "-fPIC", "-Wall", "-Wno-unused-parameter"],
    "include_dirs": ["<!@(node native/vendors/cupti/find-headers.mjs)"]
  },
  "targets": [
    {
      "target_name": "flagprof_tracer",
      "type": "static_library",
      "sources": [
        "native/tracer/device_tracer.cc",
        "<!@(node scripts/vendor-sources.mjs decode)",
        "native/tracer/fpc_format.cc",
        "native/tracer/capture_decoder.cc"
      ]
    },
    {
      "target_name": "flagprof",
      "sources": ["native/addon/addon.cc", "native/addon/kineto_scan.cc", "native/addon/slice_order.cc"],
      "dependencies": ["flagprof_tracer"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS"]
    },
    {
      "target_name": "flagprof_agent",
      "type": "shared_library",
      "product_prefix": "lib",
      "sources": [
        "native/agent/agent.cc",
        "<!@(node scripts/vendor-sources.mjs binding)"
      ],
      "dependencies": ["flagprof_tracer"],
      "cflags_cc": ["-fvisibility=hidden"],
      "ldflags": ["-Wl,--exclude-libs,ALL"],
      "libraries": ["-ldl", "-lpthread"]
    }
  ]
}
