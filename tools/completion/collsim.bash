# SPDX-License-Identifier: MIT
# bash completion for collsim. Commands and options come from collsim's own
# --help at completion time (the same text as the man pages), so this file
# never lists an option itself and cannot drift from the program.
_collsim()
{
    local cur prev cmd words
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        words=$("${COMP_WORDS[0]}" --help 2>/dev/null |
            sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
        COMPREPLY=($(compgen -W "$words --help --version" -- "$cur"))
        return
    fi
    cmd=${COMP_WORDS[1]}
    case $prev in
        --format) COMPREPLY=($(compgen -W "table csv json" -- "$cur")); return ;;
        --engine) COMPREPLY=($(compgen -W "analytic des" -- "$cur")); return ;;
        --checkpointing) COMPREPLY=($(compgen -W "none selective full" -- "$cur")); return ;;
        --attention) COMPREPLY=($(compgen -W "flash standard" -- "$cur")); return ;;
        --cluster | --model | --strategy | --strategies | --op | --algo | --proto | --dtype | --optimizer)
            # the names a help text lists after the option, else files
            words=$("${COMP_WORDS[0]}" "$cmd" --help 2>/dev/null | tr ',|()' '    ' |
                grep -o '[a-z][a-z0-9_.-]*[a-z0-9]' | sort -u)
            COMPREPLY=($(compgen -W "$words" -- "$cur") $(compgen -f -- "$cur"))
            return ;;
        -o | --output | --trace | --emit-schedule | --plot | --crossings | --report | \
            --measurements | --nccl-tests)
            COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    if [[ $cur == -* ]]; then
        words=$("${COMP_WORDS[0]}" "$cmd" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u)
        COMPREPLY=($(compgen -W "$words --help" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -F _collsim collsim
