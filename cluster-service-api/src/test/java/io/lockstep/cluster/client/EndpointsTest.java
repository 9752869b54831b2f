package io.lockstep.cluster.client;

import io.lockstep.cluster.transport.Member;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EndpointsTest
{
    @Test
    void aMembersListAsTheConfigurationWritesItIsTheClientsEndpointsWithoutTheStandbys()
    {
        assertEquals(List.of(new Member(0, "10.0.1.1", 9101, true), new Member(2, "db-2.example", 9103, true)),
            Endpoints.parse(" 0=10.0.1.1:9101, 1=10.9.0.1:9101/nonvoting,2=db-2.example:9103 "));
        assertEquals(List.of(new Member(5, "::1", 9101, true)), Endpoints.parse("5=::1:9101"));
    }

    @Test
    void anEntryThatIsNotIdEqualsHostColonPortIsNamed()
    {
        for (final String bad : new String[]{ "10.0.1.1:9101", "0=10.0.1.1", "0=:9101", "x=h:1", "0=h:0", "0=h:70000",
            "0=h:1,0=g:2", "-1=h:1", "0=h:" })
        {
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, ()
                -> Endpoints.parse(bad));
            assertTrue(ex.getMessage().contains("is not id=host:port"), bad + ": " + ex.getMessage());
        }
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Endpoints.parse(" , "))
            .getMessage().contains("no endpoints"));
    }
}
