%% Echo server on BEAM: one process per connection, the yardstick for Lona's
%% sockets. Run: erlc echo.erl && erl -noshell -run echo main 7000
%% Drive it with bench/loadgen/loadgen.go; stop it with Ctrl-C or kill.
-module(echo).
-export([main/1]).

main([Port]) ->
    {ok, L} = gen_tcp:listen(list_to_integer(Port),
                             [binary, {packet, raw}, {active, false}, {reuseaddr, true},
                              {nodelay, true}, {backlog, 4096}]),
    io:format("echo listening port=~s~n", [Port]),
    accept(L).

accept(L) ->
    {ok, S} = gen_tcp:accept(L),
    Pid = spawn(fun() -> receive go -> loop(S) end end),
    ok = gen_tcp:controlling_process(S, Pid),
    Pid ! go,
    accept(L).

loop(S) ->
    case gen_tcp:recv(S, 0) of
        {ok, Data} -> ok = gen_tcp:send(S, Data), loop(S);
        {error, _} -> gen_tcp:close(S)
    end.
