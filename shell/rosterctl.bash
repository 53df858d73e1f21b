# bash completion for rosterctl                               -*- shell-script -*-
# Installed as /usr/share/bash-completion/completions/rosterctl (loaded on demand by bash-completion).

_rosterctl() {
    local cur prev words cword
    _init_completion -s 2>/dev/null || {
        cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}
        words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
    }

    local verbs="register login logout whoami account sessions passkey app-password recover check-username user audit contacts status mail watch call"
    local globals="--help --version --socket --json --json=short --json=pretty --no-legend --locale"

    case $prev in
        --socket) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --locale) COMPREPLY=($(compgen -W "zh-Hans en vi ko" -- "$cur")); return ;;
        --username|--email|--name|--phone|--note|--limit|--offset|--reason|--user|--since|--code) return ;;
        --event) COMPREPLY=($(compgen -W "register login logout resume password_changed email_changed deleted locked
            unlocked recovery_codes_created recovered totp_enabled totp_disabled session_revoked failures_reset
            backup mail_queued mail_failed email_verified passkey_added passkey_removed passkey_rejected
            app_password_added app_password_removed" -- "$cur")); return ;;
        --status) COMPREPLY=($(compgen -W "queued sent failed" -- "$cur")); return ;;
        --format) COMPREPLY=($(compgen -W "vcard csv" -- "$cur")); return ;;
    esac

    # The verb is the first word that is not an option or an option's value.
    local verb="" i
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --socket|--locale) ((i++)) ;;
            -*) ;;
            *) verb=${words[i]}; break ;;
        esac
    done

    if [[ -z $verb ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$globals" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$verbs" -- "$cur"))
        fi
        return
    fi

    local options=""
    case $verb in
        register) options="--username --email --password-stdin" ;;
        login) options="--username --password-stdin" ;;
        account)
            if [[ $cword -eq $((i + 1)) ]]; then
                COMPREPLY=($(compgen -W "show password email verify-email delete export recovery-codes totp" -- "$cur"))
                return
            fi
            case ${words[i+1]} in
                totp)
                    if [[ $cword -eq $((i + 2)) ]]; then
                        COMPREPLY=($(compgen -W "enroll confirm disable" -- "$cur"))
                        return
                    fi
                    options="--password-stdin" ;;
                password|email|recovery-codes) options="--password-stdin" ;;
                delete) options="--yes --password-stdin" ;;
                verify-email) options="--code" ;;
                export)
                    if [[ $prev == --output ]]; then COMPREPLY=($(compgen -f -- "$cur")); return; fi
                    options="--output" ;;
            esac ;;
        sessions)
            # IDs are the daemon's; listing them here would need a connection, so only the commands.
            if [[ $cword -eq $((i + 1)) ]]; then COMPREPLY=($(compgen -W "list revoke revoke-others" -- "$cur")); return; fi ;;
        passkey)
            # IDs are the daemon's; listing them here would need a connection, so only the commands.
            if [[ $cword -eq $((i + 1)) ]]; then COMPREPLY=($(compgen -W "list rm" -- "$cur")); return; fi
            [[ ${words[i+1]} == rm ]] && options="--password-stdin" ;;
        app-password)
            # Names are the user's and IDs the daemon's, so only the commands.
            if [[ $cword -eq $((i + 1)) ]]; then COMPREPLY=($(compgen -W "create list rm" -- "$cur")); return; fi ;;
        recover) options="--username --email --password-stdin" ;;
        user)
            # Names are the daemon's, and listing them needs an administrator's connection, so only the commands.
            if [[ $cword -eq $((i + 1)) ]]; then
                COMPREPLY=($(compgen -W "add list show lock unlock rm reset-limit" -- "$cur"))
                return
            fi
            case ${words[i+1]} in
                add) options="--email --password-stdin" ;;
                list) options="--limit --offset" ;;
                lock) options="--reason" ;;
                rm) options="--yes" ;;
            esac ;;
        audit) options="--user --event --since --limit --follow" ;;
        mail)
            if [[ $cword -eq $((i + 1)) ]]; then COMPREPLY=($(compgen -W "list" -- "$cur")); return; fi
            options="--status --limit" ;;
        contacts)
            if [[ $cword -eq $((i + 1)) ]]; then
                COMPREPLY=($(compgen -W "list search add edit rm import export changes vcard put-vcard" -- "$cur"))
                return
            fi
            case ${words[i+1]} in
                list|search) options="--limit --offset" ;;
                add) options="--phone --email --note" ;;
                edit) options="--name --phone --email --note" ;;
                export) options="--format" ;;
                changes) options="--since" ;;
                put-vcard) options="--if-match --if-none-match" ;;
                import)
                    # FILE, or - for stdin; vCard and CSV files first, since that is what it reads.
                    if [[ $cur != -* ]]; then
                        COMPREPLY=($(compgen -f -X '!*.@(vcf|VCF|vcard|csv|CSV)' -- "$cur") $(compgen -d -- "$cur"))
                        [[ ${#COMPREPLY[@]} -eq 0 ]] && COMPREPLY=($(compgen -f -- "$cur"))
                        return
                    fi
                    options="--format" ;;
            esac ;;
        watch) [[ $cur != -* ]] && { COMPREPLY=($(compgen -W "register login contacts" -- "$cur")); return; } ;;
        call)
            if [[ $cword -eq $((i + 1)) ]]; then
                COMPREPLY=($(compgen -W "session.hello session.whoami session.logout session.resume form.open form.input
                    form.submit form.close users.check_username users.register auth.login rpc.describe admin.stats
                    contacts.list contacts.search contacts.add contacts.update contacts.remove contacts.import
                    contacts.export contacts.changes contacts.get_vcard contacts.get_vcards contacts.put_vcard account.show account.change_password account.change_email account.delete
                    account.export account.recovery_codes account.totp_enroll account.totp_confirm
                    account.totp_disable session.list session.revoke session.revoke_others auth.recover
                    admin.users.list admin.users.show admin.users.lock admin.users.unlock admin.users.delete
                    admin.users.reset_failures admin.audit account.email_verify_send account.email_verify
                    auth.recover_start admin.mail.list" -- "$cur"))
                return
            fi ;;
    esac
    COMPREPLY=($(compgen -W "$options $globals" -- "$cur"))
}
complete -F _rosterctl rosterctl
