# bash completion for poolsim: subcommands, then each subcommand's flags as
# its own --help lists them (so the completion never falls behind the
# program), and file names for FILE arguments and PATH/FILE flags.
_poolsim() {
  local cur prev words cword
  _init_completion 2>/dev/null || {
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  }
  local prog=${words[0]} sub="" i
  for ((i = 1; i < cword; i++)); do
    case ${words[i]} in
      -*) ;;
      *) sub=${words[i]}; break ;;
    esac
  done
  if [[ -z $sub ]]; then
    local subs
    subs=$("$prog" --help 2>/dev/null | awk '/^Subcommands:/{s=1;next} s&&NF{print $1}')
    COMPREPLY=($(compgen -W "$subs --help --version" -- "$cur"))
    return
  fi
  case $prev in
    --machine)
      COMPREPLY=($(compgen -W "default host" -- "$cur") $(compgen -f -X '!*.y*ml' -- "$cur"))
      return ;;
    --json|--csv|--plot|--trace|--records|--out|--html|-o)
      COMPREPLY=($(compgen -f -- "$cur"))
      return ;;
  esac
  if [[ $cur == -* ]]; then
    local flags
    flags=$("$prog" "$sub" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*|(^|[ ,])-[a-z]\b' | tr -d ' ,' | sort -u)
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    return
  fi
  if [[ $sub == merge ]]; then
    COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur"))
  else
    COMPREPLY=($(compgen -f -X '!*.y*ml' -- "$cur") $(compgen -d -- "$cur"))
  fi
}
complete -o filenames -F _poolsim poolsim
