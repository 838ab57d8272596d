{
  "target_defaults": {
    "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
    "cflags_cc": ["-std=gnu++17", "-O2", "-fexceptions", "-fPIC", "-Wall", "-Wno-unused-parameter"],
    "include_dirs": ["<!@(node native/tracer/find-cupti-headers.mjs)"]
  },
  "targets": [
    {
      "target_name": "flagprof_tracer",
      "type": "static_library",
      "sources": [
        "native/tracer/device_tracer.cc",
        "native/tracer/cupti_decode.cc",
        "native/tracer/mspti_decode.cc",
        "native/tracer/roctracer_decode.cc",
        "native/tracer/fpc_format.cc",
        "native/tracer/capture_decoder.cc"
      ]
    },
    {
      "target_name": "flagprof",
      "sources": ["native/addon/addon.cc"],
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
        "native/agent/cupti_binding.cc",
        "native/agent/mspti_binding.cc",
        "native/agent/roctracer_binding.cc"
      ],
      "dependencies": ["flagprof_tracer"],
      "cflags_cc": ["-fvisibility=hidden"],
      "ldflags": ["-Wl,--exclude-libs,ALL"],
      "libraries": ["-ldl", "-lpthread"]
    }
  ]
}
