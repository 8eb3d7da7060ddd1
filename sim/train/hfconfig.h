/* SPDX-License-Identifier: MIT */
/*
 * hfconfig.h - a Hugging Face model config (config.json) read as a
 * collsim model shape: `--model hf:PATH/config.json`, or any path whose
 * file name is config.json, wherever a model spec is taken (model.c
 * hands such specs here).
 *
 * One table row per architecture family (model_type or architectures[0]:
 * llama, mistral, qwen2, gpt2, gpt_neox, falcon, mixtral with its experts;
 * qwen2_moe is recognised and refused, its shared expert has no place in
 * the model schema) names the HF key of each field and the family's fixed
 * style (gated MLP, biases, positions, tied default). The mapping, its sources and departures: hfconfig.c and
 * configs/models/README.md.
 */
#ifndef CS_HFCONFIG_H
#define CS_HFCONFIG_H

#include <stddef.h>

#include "base/error.h"
#include "train/model.h"

/* The file a spec names if it is a HF config ("hf:PATH" gives PATH, a
 * path whose file name is config.json gives itself), else NULL. The
 * result points into spec. */
const char *cs_hfconfig_path(const char *spec);

/* Reads a config.json into *out (derived fields filled). The name is
 * `_name_or_path` if present, else the folder holding the file ("model"
 * when none). Errors are CS_ECONFIG with file:line:column: a required key
 * missing (at the top mapping, naming the key), a value out of range, an
 * unknown architecture (listing the supported ones), a refused one;
 * CS_ENOENT / CS_EIO when the file cannot be read. Unknown keys are
 * ignored. cs_hfconfig_load_string reads text as if from file origin. */
int cs_hfconfig_load(const char *path, cs_model *out, cs_diag *d);
int cs_hfconfig_load_string(const char *origin, const char *json, size_t len, cs_model *out,
                            cs_diag *d);

#endif
