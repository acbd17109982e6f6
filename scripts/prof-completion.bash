# SPDX-License-Identifier: GPL-3.0-or-later
# Bash completion for prof (make install puts it in bash-completion's completions folder
# as "prof"; or: source scripts/prof-completion.bash). The commands come from the list in
# `prof --help` and each command's options from its `prof COMMAND --help`, so that this
# file never lags behind the command; only the values of a few options are listed here.
# shellcheck disable=SC2207 # completion words are split on blanks on purpose

_prof_options() { # the options in the help of command $1
    "${COMP_WORDS[0]}" "$1" --help 2>/dev/null | grep -oE -- '(^| )--?[a-zA-Z][a-z-]*' |
        sed 's/^ *//' | sort -u
}

_prof_commands() { # the commands section of prof --help
    "${COMP_WORDS[0]}" --help 2>/dev/null |
        awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }'
}

_prof_values() { # the values of option $2 of command $1, or nothing for a file
    case "$1:$2" in
    report:-f | report:--format) echo "top folded svg html json speedscope pprof" ;;
    stacks:-f | stacks:--format) echo "text folded" ;;
    diff:-f | diff:--format) echo "text json markdown svg" ;;
    report:-s | report:--sort) echo "flat cum" ;;
    record:--timer) echo "auto perf thread itimer" ;;
    record:-e | record:--event) echo "task-clock cpu-clock cycles instructions" ;;
    record:--unwind) echo "auto fp dwarf libunwind check kernel" ;;
    stacks:--unwind) echo "auto dwarf fp libunwind" ;;
    record:--signal | record:--snapshot-signal | stacks:--signal)
        echo "PROF USR1 USR2 RTMIN RTMAX RTMAX-1 RTMAX-2 RTMAX-3 off" ;;
    record:--toggle-signal) echo "USR1 USR2 RTMIN RTMIN+1 RTMAX-4" ;;
    record:--mode) echo "cpu wall" ;;
    report:--state) echo "running on-cpu runnable sleeping disk stopped wait waiting off-cpu futex read poll nanosleep" ;;
    record:-p | record:--pid) ps -eo pid= 2>/dev/null ;;
    esac
}

_prof() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local cmd=${COMP_WORDS[1]} i
    if ((COMP_CWORD == 1)); then
        COMPREPLY=($(compgen -W "$(_prof_commands) --help --version" \
            -- "$cur"))
        return
    fi
    [[ $cmd == help ]] && {
        COMPREPLY=($(compgen -W "$(_prof_commands)" -- "$cur"))
        return
    }
    # After record's "--" (or its command), the words are the command's.
    if [[ $cmd == record ]]; then
        for ((i = 2; i < COMP_CWORD; i++)); do
            if [[ ${COMP_WORDS[i]} == -- ]]; then
                _command_offset $((i + 1)) 2>/dev/null || COMPREPLY=($(compgen -c -- "$cur"))
                return
            fi
        done
    fi
    local values
    values=$(_prof_values "$cmd" "$prev")
    if [[ -n $values ]]; then
        COMPREPLY=($(compgen -W "$values" -- "$cur"))
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_prof_options "$cmd")" \
            -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}

complete -o filenames -F _prof prof
